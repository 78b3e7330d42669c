package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestOpenCreatesOnlyWhereItMay: Open creates a database only in an absent
// or empty directory, MustExist never creates one, and a directory with
// other files is refused.
func TestOpenCreatesOnlyWhereItMay(t *testing.T) {
	root := t.TempDir()
	t.Run("absent with MustExist", func(t *testing.T) {
		dir := filepath.Join(root, "typo")
		_, err := Open(dir, &Options{MustExist: true})
		if !errors.Is(err, ErrNoDatabase) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("got %v, want ErrNoDatabase naming %s", err, dir)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("MustExist created %s: %v", dir, err)
		}
	})
	t.Run("empty with MustExist", func(t *testing.T) {
		dir := filepath.Join(root, "empty")
		os.Mkdir(dir, 0o755)
		if _, err := Open(dir, &Options{MustExist: true}); !errors.Is(err, ErrNoDatabase) {
			t.Fatalf("got %v, want ErrNoDatabase", err)
		}
		if names, _ := os.ReadDir(dir); len(names) != 0 {
			t.Fatalf("MustExist wrote %d files", len(names))
		}
	})
	t.Run("foreign files", func(t *testing.T) {
		dir := filepath.Join(root, "foreign")
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		if _, err := Open(dir, nil); !errors.Is(err, ErrNotDatabase) {
			t.Fatalf("got %v, want ErrNotDatabase", err)
		}
		if names, _ := os.ReadDir(dir); len(names) != 1 {
			t.Fatalf("Open wrote into a foreign directory: %d entries", len(names))
		}
	})
	t.Run("created, then MustExist opens it", func(t *testing.T) {
		dir := filepath.Join(root, "db")
		db := createAndReopen(t, dir, mustOpen(t, dir, nil))
		defer db.Close()
		if _, err := os.Stat(filepath.Join(dir, identityFile)); err != nil {
			t.Fatalf("no identity file: %v", err)
		}
		if st, _ := db.Stats(ctx); len(st.DatabaseID) != 36 || st.ReadOnly {
			t.Fatalf("stats: id %q, read-only %v", st.DatabaseID, st.ReadOnly)
		}
	})
	t.Run("creation interrupted by a crash", func(t *testing.T) {
		// What a SIGKILL between Pebble's first files and its manifest
		// marker leaves: a lock, a first manifest, options, an empty log.
		dir := filepath.Join(root, "interrupted")
		os.Mkdir(dir, 0o755)
		for name, data := range map[string]string{"LOCK": "", "MANIFEST-000001": strings.Repeat("m", 39), "OPTIONS-000003": "[Version]\n", "000002.log": ""} {
			os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
		}
		if _, err := Open(dir, &Options{MustExist: true}); !errors.Is(err, ErrNoDatabase) {
			t.Fatalf("MustExist: got %v, want ErrNoDatabase", err)
		}
		db, err := Open(dir, nil)
		if err != nil {
			t.Fatalf("an interrupted creation must not brick the directory: %v", err)
		}
		createAndReopen(t, dir, db).Close()
	})
	t.Run("store removed under the identity", func(t *testing.T) {
		dir := filepath.Join(root, "gutted")
		db := mustOpen(t, dir, nil)
		mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
		db.Close()
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			if n.Name() != identityFile {
				os.RemoveAll(filepath.Join(dir, n.Name()))
			}
		}
		_, err := Open(dir, nil)
		if !IsCorruption(err) {
			t.Fatalf("got %v, want a corruption error", err)
		}
		names, _ = os.ReadDir(dir)
		for _, n := range names {
			if n.Name() != identityFile && n.Name() != "LOCK" {
				t.Fatalf("Open created %s over the identity", n.Name())
			}
		}
	})
}

// createAndReopen creates a collection in db, closes it, reopens dir with
// MustExist and checks the collection is there.
func createAndReopen(t *testing.T, dir string, db *DB) *DB {
	t.Helper()
	mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	db.Close()
	db = mustOpen(t, dir, &Options{MustExist: true})
	if _, err := db.Collection("c"); err != nil {
		t.Fatal(err)
	}
	return db
}

// roFS fails every write as a read-only filesystem does.
type roFS struct{ vfs.FS }

func (roFS) erofs(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: syscall.EROFS}
}
func (f roFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, f.erofs("create", name)
}
func (f roFS) MkdirAll(dir string, _ os.FileMode) error { return f.erofs("mkdir", dir) }
func (f roFS) Lock(name string) (io.Closer, error)      { return nil, f.erofs("open", name) }

// TestOpenReadOnlyFilesystem: a read-only filesystem is reported as such,
// not as a database held by another process.
func TestOpenReadOnlyFilesystem(t *testing.T) {
	mem := vfs.NewMem()
	db := mustOpen(t, "db", &Options{FS: mem})
	db.Close()
	for _, dir := range []string{"db", "new"} {
		_, err := Open(dir, &Options{FS: roFS{mem}})
		if err == nil || errors.Is(err, ErrLocked) || !errors.Is(err, syscall.EROFS) || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("%s: got %v, want a read-only filesystem error", dir, err)
		}
	}
}

// TestFatalBecomesError: Pebble's Fatalf inside a mnemo call becomes that
// call's error; in a goroutine of Pebble's own it stops that goroutine
// and fails the database's later calls. Neither panics the process.
func TestFatalBecomesError(t *testing.T) {
	var f failure
	logger := pebbleLogger{slog.New(slog.DiscardHandler), &f}
	err := guard(func() error {
		logger.Fatalf("pebble: fatal commit error: %v", &os.PathError{Op: "write", Path: "000002.log", Err: syscall.ENOSPC})
		t.Error("Fatalf returned")
		return nil
	})
	if !errors.Is(err, ErrNoSpace) || !errors.Is(f.get(), ErrNoSpace) {
		t.Fatalf("got %v (state %v), want ErrNoSpace", err, f.get())
	}

	var g failure
	logger = pebbleLogger{slog.New(slog.DiscardHandler), &g}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		logger.Fatalf("MANIFEST sync failed: %v", errors.New("input/output error"))
		t.Error("Fatalf returned in a background goroutine")
	}()
	wg.Wait()
	if !errors.Is(g.get(), ErrFailed) || !g.abandoned.Load() {
		t.Fatalf("state %v, abandoned %v; want ErrFailed and abandoned", g.get(), g.abandoned.Load())
	}
}

// TestFailedDatabaseFailsCalls: after background corruption every call
// returns the corruption error; Close releases the directory so that a
// reopen is possible.
func TestFailedDatabaseFailsCalls(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	if _, err := c.Upsert(ctx, crashBatchRecords(0)...); err != nil {
		t.Fatal(err)
	}
	db.fail.listener(db.logger).BackgroundError(errors.Join(ErrCorrupt, errors.New("compaction: block checksum mismatch")))
	if err := db.fail.get(); err != nil {
		t.Fatalf("a background error that is not Pebble corruption failed the database: %v", err)
	}
	db.fail.listener(db.logger).DataCorruption(pebbleCorruptionInfo("000005.sst"))
	if _, _, err := c.Get(ctx, crashRecord(0, 0).ID); !IsCorruption(err) {
		t.Fatalf("get after background corruption: %v", err)
	}
	if _, err := c.Upsert(ctx, crashBatchRecords(1)...); !IsCorruption(err) {
		t.Fatalf("upsert after background corruption: %v", err)
	}
	if err := db.Close(); !IsCorruption(err) {
		t.Fatalf("close: %v, want the corruption", err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("c")
	verifyBatches(t, c, 0)
}

func pebbleCorruptionInfo(path string) pebble.DataCorruptionInfo {
	return pebble.DataCorruptionInfo{Path: path, Details: errors.New("block checksum mismatch")}
}

// TestOpenReadOnly: Options.ReadOnly opens an existing database without
// writing a byte to it (a damaged checkpoint is rebuilt in memory only),
// refuses writes with ErrReadOnly, and never creates a database.
func TestOpenReadOnly(t *testing.T) {
	root := t.TempDir()
	if _, err := Open(filepath.Join(root, "none"), &Options{ReadOnly: true}); !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("read-only open of a missing database: %v, want ErrNoDatabase", err)
	}
	dir := filepath.Join(root, "db")
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	for n := 0; n < 5; n++ {
		if _, err := c.Upsert(ctx, crashBatchRecords(n)...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	cps, _ := filepath.Glob(filepath.Join(dir, checkpointDir, "*"))
	for _, p := range cps {
		os.Remove(p) // the index must be rebuilt
	}
	before := snapshotDir(t, dir)
	db, err := Open(dir, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c, _ = db.Collection("c")
	verifyBatches(t, c, 4)
	if st, _ := db.Stats(ctx); !st.ReadOnly {
		t.Fatal("Stats does not say read-only")
	}
	if _, err := c.Upsert(ctx, crashBatchRecords(5)...); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("upsert: %v, want ErrReadOnly", err)
	}
	if _, err := db.CreateCollection(ctx, "d", mnemo.CollectionConfig{Dimension: 2}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("create: %v, want ErrReadOnly", err)
	}
	if err := c.Checkpoint(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("checkpoint: %v, want ErrReadOnly", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after := snapshotDir(t, dir); after != before {
		t.Fatalf("a read-only open changed the directory:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshotDir describes every file under dir but the lock (name, size,
// modification time).
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return nil
		}
		fi, _ := d.Info()
		fmt.Fprintf(&b, "%s:%d:%d ", p[len(dir):], fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	return b.String()
}

// TestVerifyCancelled: a Verify whose context runs out returns the
// context's error, not problems with a healthy database.
func TestVerifyCancelled(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	for n := 0; n < 300; n++ {
		if _, err := c.Upsert(ctx, crashBatchRecords(n)...); err != nil {
			t.Fatal(err)
		}
	}
	// The context runs out part way: after the checks before the scan.
	n := 2
	ps, err := db.Verify(countdown{ctx, &n})
	if !errors.Is(err, context.Canceled) || len(ps) != 0 {
		t.Fatalf("verify with a cancelled context: %v %v, want context.Canceled and no problems", ps, err)
	}
}

// countdown is a context whose Err is nil for its first n calls and
// context.Canceled after: a deadline that runs out part way through a call.
type countdown struct {
	context.Context
	n *int
}

func (c countdown) Err() error {
	if *c.n > 0 {
		*c.n--
		return nil
	}
	return context.Canceled
}
