package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// fullFS is a filesystem of limited size: writes past the limit fail with
// ENOSPC, as a full disk does, and GetDiskUsage tells the truth about it.
// Removing files does not give space back; raise the limit instead. When
// only is set, only writes to files it matches count and fail.
type fullFS struct {
	vfs.FS
	only  func(name string) bool
	mu    sync.Mutex
	limit int64
	used  int64
}

func (f *fullFS) setLimit(n int64) {
	f.mu.Lock()
	f.limit = n
	f.mu.Unlock()
}

func (f *fullFS) take(n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used+int64(n) > f.limit {
		return &os.PathError{Op: "write", Path: "fullfs", Err: syscall.ENOSPC}
	}
	f.used += int64(n)
	return nil
}

func (f *fullFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	avail := max(f.limit-f.used, 0)
	return vfs.DiskUsage{AvailBytes: uint64(avail), TotalBytes: uint64(f.limit), UsedBytes: uint64(f.used)}, nil
}

func (f *fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	return f.wrap(name, file, err)
}

func (f *fullFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	return f.wrap(name, file, err)
}

func (f *fullFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname, c)
	return f.wrap(newname, file, err)
}

func (f *fullFS) wrap(name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil || (f.only != nil && !f.only(name)) {
		return file, err
	}
	return &fullFile{File: file, fs: f}, nil
}

type fullFile struct {
	vfs.File
	fs *fullFS
}

func (f *fullFile) Write(p []byte) (int, error) {
	if err := f.fs.take(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.take(len(p)); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

// spaceRecords is batch n of the disk-full tests: few records with large
// contents, so that a few hundred batches fill the test filesystems.
func spaceRecords(n int) []mnemo.Record {
	recs := crashBatchRecords(n)
	for i := range recs {
		recs[i].Content = strings.Repeat(fmt.Sprintf("batch %d record %d. ", n, i), 2000)
	}
	return recs
}

// checkSpaceRecords checks that exactly batches 0..acked-1 are stored.
func checkSpaceRecords(t *testing.T, c *Collection, acked int) {
	t.Helper()
	if n := c.Count(); n != acked*crashBatch {
		t.Fatalf("%d records stored, want the %d acknowledged", n, acked*crashBatch)
	}
	for n := 0; n < acked; n++ {
		for _, want := range spaceRecords(n) {
			got, ok, err := c.Get(ctx, want.ID)
			if err != nil || !ok || !sameRecord(got, want) {
				t.Fatalf("record %s: found %v, err %v, same %v", want.ID, ok, err, ok && sameRecord(got, want))
			}
		}
	}
}

// fillUntil upserts batches from from on until one fails, and returns the
// number of that batch (so batches before it were acknowledged) and the
// error; a write that does not return within a
// minute fails the test (a full disk must not hang a write).
func fillUntil(t *testing.T, c *Collection, from int) (int, error) {
	t.Helper()
	for n := from; n < from+100000; n++ {
		errc := make(chan error, 1)
		go func() {
			_, err := c.Upsert(ctx, spaceRecords(n)...)
			errc <- err
		}()
		select {
		case err := <-errc:
			if err != nil {
				return n, err
			}
		case <-time.After(time.Minute):
			t.Fatalf("batch %d: Upsert did not return within a minute on a full disk", n)
		}
	}
	t.Fatal("the disk never filled")
	return 0, nil
}

// TestDiskFullFloor: writes are refused below the free-space floor with
// ErrNoSpace, reads go on, and writes succeed again once space is free,
// without a reopen. Nothing acknowledged is lost.
func TestDiskFullFloor(t *testing.T) {
	fs := &fullFS{FS: vfs.NewMem(), limit: 40 << 20}
	opts := &Options{FS: fs, MinFreeSpace: 32 << 20, CheckpointEvery: -1}
	db := mustOpen(t, "db", opts)
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	acked, err := fillUntil(t, c, 0)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("after %d batches: %v, want ErrNoSpace", acked, err)
	}
	t.Logf("refused after %d batches: %v", acked, err)
	checkSpaceRecords(t, c, acked) // reads go on
	if _, err := c.Upsert(ctx, spaceRecords(acked)...); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("the same write again: %v, want ErrNoSpace", err)
	}

	fs.setLimit(44 << 20) // space freed
	more, err := fillUntil(t, c, acked)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("after freeing space: %v", err)
	}
	if more <= acked {
		t.Fatalf("no write succeeded after space was freed")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err) // a checkpoint refused for space is skipped, not an error
	}
	fs.setLimit(1 << 30)
	db = mustOpen(t, "db", opts)
	defer db.Close()
	c, _ = db.Collection("c")
	checkSpaceRecords(t, c, more)
}

// TestDiskFullInsidePebble: with the floor disabled, the write that meets
// the full disk inside Pebble's log fails with ErrNoSpace instead of
// panicking; every later call fails the same way (Pebble may already show
// the failed batch to readers), and a reopen with space recovers every
// acknowledged write and nothing else. Only the log's writes fail here:
// with the floor disabled, a flush that meets a full disk first stalls
// writes while Pebble retries it (README says so).
func TestDiskFullInsidePebble(t *testing.T) {
	isLog := func(name string) bool { return strings.HasSuffix(name, ".log") }
	fs := &fullFS{FS: vfs.NewMem(), only: isLog, limit: 6 << 20}
	opts := &Options{FS: fs, MinFreeSpace: -1, CheckpointEvery: -1}
	db := mustOpen(t, "db", opts)
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	acked, err := fillUntil(t, c, 0)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("after %d batches: %v, want ErrNoSpace", acked, err)
	}
	t.Logf("failed after %d batches: %v", acked, err)
	fs.setLimit(1 << 30)
	if _, err := c.Upsert(ctx, spaceRecords(acked)...); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write after a failed commit: %v, want the sticky ErrNoSpace", err)
	}
	if _, _, err := c.Get(ctx, spaceRecords(0)[0].ID); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("read after a failed commit: %v, want the sticky ErrNoSpace", err)
	}
	if err := db.Close(); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("close of the failed database: %v, want its ErrNoSpace", err)
	}
	db = mustOpen(t, "db", opts)
	defer db.Close()
	c, _ = db.Collection("c")
	checkSpaceRecords(t, c, acked)
	if _, err := c.Upsert(ctx, spaceRecords(acked)...); err != nil {
		t.Fatalf("write after reopen: %v", err)
	}
}

// TestFullDiskOpenAndClose: Open of a database whose disk is below the
// floor opens it for reading (Pebble would otherwise write a manifest and
// a log there, and wait forever on a full disk), even when the index must
// be rebuilt; Close on a full disk returns without flushing. After space is
// freed a reopen writes again, and nothing acknowledged is lost.
func TestFullDiskOpenAndClose(t *testing.T) {
	fs := &fullFS{FS: vfs.NewMem(), limit: 1 << 30}
	opts := &Options{FS: fs, MinFreeSpace: 32 << 20, CheckpointEvery: -1}
	db := mustOpen(t, "db", opts)
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	for n := 0; n < 10; n++ {
		if _, err := c.Upsert(ctx, spaceRecords(n)...); err != nil {
			t.Fatal(err)
		}
	}
	fs.mu.Lock()
	fs.limit = fs.used + 1<<20 // another process filled the disk
	fs.mu.Unlock()
	if err := db.Close(); err != nil {
		t.Fatalf("close on a full disk: %v", err)
	}
	// No checkpoint could be written: the next Open rebuilds the index.
	names, _ := fs.List("db/" + checkpointDir)
	for _, n := range names {
		fs.Remove("db/" + checkpointDir + "/" + n)
	}

	db, err := Open("db", opts)
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	if st, _ := db.Stats(ctx); !st.ReadOnly {
		t.Fatal("Stats does not say the database was opened read-only")
	}
	c, _ = db.Collection("c")
	checkSpaceRecords(t, c, 10)
	if _, err := c.Upsert(ctx, spaceRecords(10)...); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write to a database opened on a full disk: %v, want ErrNoSpace", err)
	}
	if _, err := db.CreateCollection(ctx, "d", mnemo.CollectionConfig{Dimension: 2}); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("create on a database opened on a full disk: %v, want ErrNoSpace", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	fs.setLimit(1 << 30)
	db = mustOpen(t, "db", opts)
	defer db.Close()
	c, _ = db.Collection("c")
	checkSpaceRecords(t, c, 10)
	if _, err := c.Upsert(ctx, spaceRecords(10)...); err != nil {
		t.Fatalf("write after space was freed: %v", err)
	}
}

// availFS reports a fixed free space.
type availFS struct {
	vfs.FS
	avail uint64
}

func (f availFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	return vfs.DiskUsage{AvailBytes: f.avail, TotalBytes: 1 << 40}, nil
}

// TestFloorCountsWhatACheckpointWrites: a checkpoint file is written
// once, so 43 MiB free above a 32 MiB floor has room for a 3 MiB
// checkpoint (it was refused, counted as 4x Pebble write amplification),
// while 3 MiB into Pebble (12 MiB estimated) would not fit; the error
// says the free space, the estimate and the floor.
func TestFloorCountsWhatACheckpointWrites(t *testing.T) {
	g := newSpaceGuard(availFS{vfs.NewMem(), 43 << 20}, "db", 32<<20)
	if err := g.reserveFile(3 << 20); err != nil {
		t.Fatalf("a 3 MiB checkpoint with 43 MiB free and a 32 MiB floor: %v", err)
	}
	g = newSpaceGuard(availFS{vfs.NewMem(), 43 << 20}, "db", 32<<20)
	err := g.reserve(3 << 20)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("3 MiB into Pebble with 43 MiB free and a 32 MiB floor: %v, want ErrNoSpace", err)
	}
	for _, want := range []string{"43.00 MiB free", "estimated 12.00 MiB", "32.00 MiB floor"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
