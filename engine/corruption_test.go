package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// seedCorruptible writes a database with a checkpoint and log records after
// it, and returns the filesystem and the checkpoint file's path.
func seedCorruptible(t *testing.T) (vfs.FS, string) {
	t.Helper()
	fs := vfs.NewMem()
	db := mustOpen(t, "db", &Options{FS: fs, CheckpointEvery: -1})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	for n := 0; n < 20; n++ {
		if _, err := c.Upsert(ctx, crashBatchRecords(n)...); err != nil {
			t.Fatal(err)
		}
		if n == 10 {
			if err := c.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	desc, _, _ := db.readDesc(c.id)
	// Close without the closing checkpoint, so the log after it remains.
	c.sinceCheckpoint.Store(0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, fs.PathJoin("db", checkpointDir, desc.File)
}

func flipByte(t *testing.T, fs vfs.FS, path string, off int64) {
	t.Helper()
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x41
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptCheckpoint flips bytes at several places of a checkpoint file
// and removes it: each time Open must rebuild from the records, say so in
// Stats, and return exactly the stored data.
func TestCorruptCheckpoint(t *testing.T) {
	for _, off := range []int64{0, 9, 40, 200, 1000, -5, -1} {
		t.Run(fmt.Sprintf("flip at %d", off), func(t *testing.T) {
			fs, path := seedCorruptible(t)
			st, _ := fs.Stat(path)
			at := off
			if at < 0 {
				at += st.Size()
			}
			flipByte(t, fs, path, at)
			checkRebuilt(t, fs, "checkpoint")
		})
	}
	t.Run("missing", func(t *testing.T) {
		fs, path := seedCorruptible(t)
		if err := fs.Remove(path); err != nil {
			t.Fatal(err)
		}
		checkRebuilt(t, fs, "checkpoint")
	})
}

// TestCorruptLog damages a log record after the checkpoint: Open must
// notice, rebuild from the intact records, and report it.
func TestCorruptLog(t *testing.T) {
	fs, _ := seedCorruptible(t)
	pdb, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{slog.New(slog.DiscardHandler), &failure{}}})
	if err == nil {
		prefix := cidPrefix(tagLog, 1)
		it, _ := pdb.NewIter(&pebble.IterOptions{LowerBound: append(prefix, 0), UpperBound: prefixEnd(prefix)})
		it.First()
		it.Next()
		key := append([]byte(nil), it.Key()...)
		val := append([]byte(nil), it.Value()...)
		it.Close()
		val[len(val)-1] ^= 0xff
		if err := pdb.Set(key, val, pebble.Sync); err != nil {
			t.Fatal(err)
		}
		pdb.Close()
	} else {
		t.Fatal(err)
	}
	checkRebuilt(t, fs, "log replay")
}

func checkRebuilt(t *testing.T, fs vfs.FS, reason string) {
	t.Helper()
	db := mustOpen(t, "db", &Options{FS: fs})
	defer db.Close()
	c, err := db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := c.Stats(ctx)
	if st.OpenedBy != "rebuild" || !contains(st.RebuildReason, reason) {
		t.Fatalf("opened by %q (%q), want a rebuild because of the %s", st.OpenedBy, st.RebuildReason, reason)
	}
	verifyBatches(t, c, 19)
	// The rebuild was checkpointed: the next Open loads it.
	db.Close()
	db = mustOpen(t, "db", &Options{FS: fs})
	c, _ = db.Collection("c")
	if st, _ := c.Stats(ctx); st.OpenedBy != "checkpoint+replay" {
		t.Fatalf("second open by %q (%q)", st.OpenedBy, st.RebuildReason)
	}
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

// TestCorruptRecord damages a stored record: Open must fail with a
// corruption error naming it, never serve wrong data.
func TestCorruptRecord(t *testing.T) {
	fs, _ := seedCorruptible(t)
	pdb, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{slog.New(slog.DiscardHandler), &failure{}}})
	if err != nil {
		t.Fatal(err)
	}
	key := recordKey(1, crashRecord(3, 2).ID)
	v, closer, err := pdb.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), v...)
	closer.Close()
	bad[20] ^= 1
	pdb.Set(key, bad, pebble.Sync)
	pdb.Close()
	_, err = Open("db", &Options{FS: fs})
	if !IsCorruption(err) || !errors.Is(err, ErrCorrupt) || !contains(err.Error(), crashRecord(3, 2).ID) {
		t.Fatalf("open with a corrupt record: %v", err)
	}
}

func TestVerify(t *testing.T) {
	fs, _ := seedCorruptible(t)
	db := mustOpen(t, "db", &Options{FS: fs})
	if ps, err := db.Verify(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("a healthy database: %v, %v", ps, err)
	}
	db.Close() // writes a new checkpoint (the log had records to replay)
	names, err := fs.List(fs.PathJoin("db", checkpointDir))
	if err != nil || len(names) != 1 {
		t.Fatalf("checkpoint files %v, %v", names, err)
	}
	flipByte(t, fs, fs.PathJoin("db", checkpointDir, names[0]), 100)
	// Reopening rebuilds (and re-checkpoints); Verify reports that it had to.
	db = mustOpen(t, "db", &Options{FS: fs})
	ps, err := db.Verify(ctx)
	if err != nil || len(ps) != 1 || !contains(ps[0], "rebuilt at open") {
		t.Fatalf("after a damaged checkpoint: %v, %v", ps, err)
	}
	db.Close()
	// The rebuild replaced the damaged file, though no write came since.
	db = mustOpen(t, "db", &Options{FS: fs})
	defer db.Close()
	if ps, err := db.Verify(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("after the rebuild: %v, %v", ps, err)
	}
}
