package mnemotest

import (
	"context"
	"errors"
	"testing"

	"github.com/mnemodb/mnemo"
)

// Pair returns two Stores on the same data for one test (two handles of
// one engine database, two Stores of one PostgreSQL schema). The suite
// closes both.
type Pair func(t *testing.T) (mnemo.Store, mnemo.Store)

// RunShared runs the suite's checks of what two handles on the same data
// see of each other: a memory cleared or dropped through one, locks, and
// positions reserved through both.
func RunShared(t *testing.T, open Pair) {
	tests := []struct {
		name string
		fn   func(*testing.T, mnemo.Store, mnemo.Store)
	}{
		{"ClearFromOne", testClearFromOne},
		{"DropFromOne", testDropFromOne},
		{"Locks", testLocks},
		{"Sequence", testSharedSequence},
		{"ReplaceFromOne", testReplaceFromOne},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := open(t)
			defer a.Close()
			defer b.Close()
			tc.fn(t, a, b)
		})
	}
}

var sharedCfg = mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2, Index: mnemo.Flat}

func sharedRecords(ids ...string) []mnemo.Record {
	recs := make([]mnemo.Record, len(ids))
	for i, id := range ids {
		recs[i] = mnemo.Record{ID: id, Vector: []float32{float32(i), 1}, Content: "note " + id}
	}
	return recs
}

// testClearFromOne: b deletes every record (a memory's Clear); a's
// collection keeps working, and each sees the other's writes.
func testClearFromOne(t *testing.T, a, b mnemo.Store) {
	ctx := context.Background()
	ca := mustCreate(t, a, "shared", sharedCfg)
	mustUpsert(t, ca, sharedRecords("1", "2", "3")...)
	cb, err := b.Collection(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := cb.Delete(ctx, "1", "2", "3"); err != nil || n != 3 {
		t.Fatalf("Delete through the other handle: %d, %v", n, err)
	}
	if n, err := ca.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after the other handle cleared: %d, %v", n, err)
	}
	mustUpsert(t, ca, sharedRecords("4")...)
	if rec, ok, err := cb.Get(ctx, "4"); err != nil || !ok || rec.Content != "note 4" {
		t.Fatalf("the other handle's Get of a new record: %v, %v, %v", rec, ok, err)
	}
	hits, err := cb.Query(ctx, mnemo.Query{Vector: []float32{0, 1}, K: 5})
	if err != nil || len(hits) != 1 || hits[0].Record.ID != "4" {
		t.Fatalf("the other handle's Query: %v, %v", hits, err)
	}
}

// testDropFromOne: b drops the collection; a's old collection fails with
// ErrCollectionNotFound (never serves old data), and once the collection
// is created again a new lookup through a sees only new records.
func testDropFromOne(t *testing.T, a, b mnemo.Store) {
	ctx := context.Background()
	ca := mustCreate(t, a, "shared", sharedCfg)
	mustUpsert(t, ca, sharedRecords("1", "2")...)
	if err := b.DropCollection(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Upsert(ctx, sharedRecords("3")...); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Upsert into a collection another handle dropped: %v, want ErrCollectionNotFound", err)
	}
	if _, err := ca.Query(ctx, mnemo.Query{Vector: []float32{0, 1}, K: 5}); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Query of a collection another handle dropped: %v, want ErrCollectionNotFound", err)
	}
	mustCreate(t, b, "shared", sharedCfg)
	again, err := a.Collection(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := again.Count(ctx); err != nil || n != 0 {
		t.Fatalf("the collection created again holds %d records, %v", n, err)
	}
}

// testLocks: a lock one handle holds is refused to the other until it is
// released; other names are free.
func testLocks(t *testing.T, a, b mnemo.Store) {
	ctx := context.Background()
	la, err := mnemo.TryLock(ctx, a, "session/1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mnemo.TryLock(ctx, b, "session/1"); !errors.Is(err, mnemo.ErrLockHeld) {
		t.Fatalf("TryLock of a held name through the other handle: %v, want ErrLockHeld", err)
	}
	if _, err := mnemo.TryLock(ctx, a, "session/1"); !errors.Is(err, mnemo.ErrLockHeld) {
		t.Fatalf("TryLock of a held name through the same handle: %v, want ErrLockHeld", err)
	}
	lb, err := mnemo.TryLock(ctx, b, "session/2")
	if err != nil {
		t.Fatalf("another name: %v", err)
	}
	if err := la.Unlock(); err != nil {
		t.Fatal(err)
	}
	la.Unlock() // a second Unlock does nothing
	lb2, err := mnemo.TryLock(ctx, b, "session/1")
	if err != nil {
		t.Fatalf("TryLock after Unlock: %v", err)
	}
	lb.Unlock()
	lb2.Unlock()
	for _, name := range []string{"\xff", "a\x00b"} { // a name no backend can hold
		if l, err := mnemo.TryLock(ctx, a, name); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("TryLock(%q): %v, want ErrInvalidConfig", name, err)
			if err == nil {
				l.Unlock()
			}
		}
	}
}
