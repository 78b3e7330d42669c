package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

var (
	_ mnemo.Sequencer = (*Collection)(nil)
	_ mnemo.Sequencer = storeCollection{}
)

func mustReserve(t *testing.T, c *Collection, n int, want int64) {
	t.Helper()
	if got, err := c.Reserve(ctx, n); err != nil || got != want {
		t.Fatalf("Reserve(%d) = %d, %v; want %d", n, got, err, want)
	}
}

// TestSequenceRestart: a sequence is stored: it goes on after a reopen,
// a read-only database refuses to change it, and a drop deletes it.
func TestSequenceRestart(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "notes", mnemo.CollectionConfig{Dimension: 2})
	if _, err := c.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrSequenceUnset) {
		t.Fatalf("Reserve of a new collection: %v, want ErrSequenceUnset", err)
	}
	if err := c.Advance(ctx, 0); err != nil {
		t.Fatal(err)
	}
	mustReserve(t, c, 3, 0)
	mustReserve(t, c, 2, 3)
	db.Close()

	db = mustOpen(t, dir, nil)
	c, _ = db.Collection("notes")
	mustReserve(t, c, 1, 5)
	db.Close()

	db = mustOpen(t, dir, &Options{ReadOnly: true})
	c, _ = db.Collection("notes")
	if _, err := c.Reserve(ctx, 1); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Reserve on a read-only database: %v, want ErrReadOnly", err)
	}
	if err := c.Advance(ctx, 50); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Advance on a read-only database: %v, want ErrReadOnly", err)
	}
	db.Close()

	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("notes")
	mustReserve(t, c, 1, 6)
	if err := db.DropCollection(ctx, "notes"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.pdb.Get(sequenceKey(c.id)); !errors.Is(err, pebble.ErrNotFound) {
		t.Fatalf("the sequence of a dropped collection: %v, want it deleted", err)
	}
}

// TestSequenceDropRace: reservations racing a drop either return a
// position or fail with ErrCollectionNotFound, and none leaves the
// sequence behind the drop.
func TestSequenceDropRace(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	for round := range 20 {
		c := mustCollection(t, db, "notes", mnemo.CollectionConfig{Dimension: 2})
		if err := c.Advance(ctx, 0); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for {
					_, err := c.Reserve(ctx, 1)
					if errors.Is(err, mnemo.ErrCollectionNotFound) {
						return
					}
					if err != nil {
						errs <- err
						return
					}
				}
			})
		}
		time.Sleep(time.Millisecond)
		if err := db.DropCollection(ctx, "notes"); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: Reserve during a drop: %v", round, err)
		}
		if _, _, err := db.pdb.Get(sequenceKey(c.id)); !errors.Is(err, pebble.ErrNotFound) {
			t.Fatalf("round %d: the sequence of the dropped collection: %v, want it deleted", round, err)
		}
	}
}

// TestSequenceCorrupt: a stored sequence that is not a position is
// reported as corruption, never used.
func TestSequenceCorrupt(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	for i, v := range [][]byte{{1, 2, 3}, {0xff, 0, 0, 0, 0, 0, 0, 0}} {
		c := mustCollection(t, db, fmt.Sprint("notes", i), mnemo.CollectionConfig{Dimension: 2})
		if err := db.pdb.Set(sequenceKey(c.id), v, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Reserve(ctx, 1); !IsCorruption(err) {
			t.Errorf("Reserve of sequence %x: %v, want corruption", v, err)
		}
	}
}

// TestSequencePowerLoss reserves positions and stores records at most of
// them (the rest are gaps), and cuts the power at random points, between
// a reservation and its records too, keeping 0, 30 or 50% of what was not
// synced, on a database with and without NoSync. In every clone the next
// Reserve returns a position past every surviving record's, and (with
// sync) every acknowledged record survives: a crash never hands out a
// position a durable record has, although reservations are not synced.
func TestSequencePowerLoss(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoSync=%v", noSync), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			db := mustOpen(t, "db", &Options{FS: fs, NoSync: noSync, CheckpointEvery: 7})
			c := mustCollection(t, db, "pos", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
			if err := c.Advance(ctx, 0); err != nil {
				t.Fatal(err)
			}
			type clone struct {
				fs    *vfs.MemFS
				acked int64 // the last position of an acknowledged record, -1 for none
				what  string
			}
			var clones []clone
			cut := func(acked int64, what string) {
				pct := []int{0, 30, 50}[r.IntN(3)]
				cfg := vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(seed, uint64(len(clones))))}
				clones = append(clones, clone{fs.CrashClone(cfg), acked, fmt.Sprintf("%s, %d%% of unsynced data kept", what, pct)})
			}
			acked := int64(-1)
			for step := range 40 {
				n := 1 + r.IntN(3)
				first, err := c.Reserve(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				if r.IntN(3) == 0 {
					cut(acked, fmt.Sprintf("cut after reservation %d (%d from %d), before its records", step, n, first))
				}
				if r.IntN(5) == 0 {
					continue // a gap
				}
				recs := make([]mnemo.Record, n)
				for i := range recs {
					p := first + int64(i)
					recs[i] = mnemo.Record{ID: fmt.Sprintf("p%d", p), Vector: []float32{1, float32(p)}, Metadata: map[string]any{"pos": p}}
				}
				if _, err := c.Upsert(ctx, recs...); err != nil {
					t.Fatal(err)
				}
				if !noSync {
					acked = first + int64(n) - 1
				}
				if r.IntN(2) == 0 {
					cut(acked, fmt.Sprintf("cut after the records of reservation %d (%d from %d)", step, n, first))
				}
			}
			db.Close()
			for _, cl := range clones {
				checkSequenceClone(t, cl.fs, cl.acked, cl.what)
			}
			t.Logf("%d clones", len(clones))
		})
	}
}

// checkSequenceClone opens the database in a crash clone and checks its
// sequence against its records (see TestSequencePowerLoss).
func checkSequenceClone(t *testing.T, fs vfs.FS, acked int64, what string) {
	t.Helper()
	db, err := Open("db", &Options{FS: fs, MustExist: true})
	if err != nil {
		t.Fatalf("%s: the database does not open: %v", what, err)
	}
	defer db.Close()
	c, err := db.Collection("pos")
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	recs, _, err := c.Scan(ctx, "", 1000)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	last, found := int64(-1), false
	for _, rec := range recs {
		p := int64(rec.Metadata["pos"].(float64))
		last = max(last, p)
		found = found || p == acked
	}
	if acked >= 0 && !found {
		t.Fatalf("%s: the acknowledged record at position %d is lost", what, acked)
	}
	next, err := c.Reserve(ctx, 1)
	switch {
	case errors.Is(err, mnemo.ErrSequenceUnset) && last < 0:
		// The sequence's start was lost, with every record after it.
	case err != nil:
		t.Fatalf("%s: Reserve with records up to position %d: %v", what, last, err)
	case next <= last:
		t.Fatalf("%s: Reserve returned %d, but a record at position %d survived", what, next, last)
	}
}
