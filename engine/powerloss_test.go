package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Power loss.
//
// These tests run the database on Pebble's crashable in-memory
// filesystem and take "crash clones": the filesystem as a power cut would
// leave it, with everything fsynced and (for UnsyncedDataPercent > 0) a
// random part of what was not, directory entries included. Every clone
// must open, and hold every write acknowledged before the cut.

// hookFS counts the filesystem operations that change what a crash keeps
// (creating, removing, renaming, linking, syncing) and calls before(n)
// ahead of the n-th, and after(n, name) behind it.
type hookFS struct {
	vfs.FS
	n      atomic.Int64
	before func(n int64, op, name string)
	after  func(n int64, op, name string)
}

func (h *hookFS) op(op, name string, f func() error) error {
	n := h.n.Add(1)
	if h.before != nil {
		h.before(n, op, name)
	}
	err := f()
	if h.after != nil {
		h.after(n, op, name)
	}
	return err
}

func (h *hookFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	var f vfs.File
	err := h.op("create", name, func() (err error) { f, err = h.FS.Create(name, c); return err })
	if err != nil {
		return nil, err
	}
	return hookFile{f, h, name}, nil
}

func (h *hookFS) OpenDir(name string) (vfs.File, error) {
	f, err := h.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return hookFile{f, h, name}, nil
}

func (h *hookFS) Remove(name string) error {
	return h.op("remove", name, func() error { return h.FS.Remove(name) })
}

func (h *hookFS) Rename(from, to string) error {
	return h.op("rename", to, func() error { return h.FS.Rename(from, to) })
}

func (h *hookFS) Link(from, to string) error {
	return h.op("link", to, func() error { return h.FS.Link(from, to) })
}

func (h *hookFS) MkdirAll(dir string, perm os.FileMode) error {
	return h.op("mkdir", dir, func() error { return h.FS.MkdirAll(dir, perm) })
}

type hookFile struct {
	vfs.File
	h    *hookFS
	name string
}

func (f hookFile) Sync() error {
	return f.h.op("sync", f.name, f.File.Sync)
}

func powerRecord(batch, i int) mnemo.Record {
	return mnemo.Record{ID: fmt.Sprintf("b%03d-%02d", batch, i), Vector: []float32{float32(batch), float32(i), 1}, Content: fmt.Sprintf("batch %d record %d", batch, i)}
}

// checkBatches opens the database in dir on fs and checks that batches
// 0..acked are all there, each whole, and that no batch is there in part.
func checkBatches(t *testing.T, fs vfs.FS, dir string, acked int, what string) {
	t.Helper()
	db, err := Open(dir, &Options{FS: fs, MustExist: acked >= 0})
	if err != nil {
		t.Fatalf("%s: the database does not open: %v", what, err)
	}
	defer db.Close()
	if acked < 0 {
		return
	}
	c, err := db.Collection("power")
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	seen := map[int]int{}
	after := ""
	for {
		page, next, err := c.Scan(ctx, after, 1000)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, r := range page {
			b, _ := strconv.Atoi(r.ID[1:4])
			seen[b]++
		}
		if next == "" {
			break
		}
		after = next
	}
	for b := 0; b <= acked; b++ {
		if seen[b] != 10 {
			t.Fatalf("%s: acknowledged batch %d has %d of 10 records", what, b, seen[b])
		}
	}
	for b, n := range seen {
		if n != 10 {
			t.Fatalf("%s: batch %d is there in part (%d of 10)", what, b, n)
		}
	}
	if problems, err := db.Verify(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("%s: Verify: %q, %v", what, problems, err)
	}
}

// TestPowerLossNewNestedPath: a database created at a path whose parents
// did not exist, then written to, survives a power cut that keeps only
// what was synced: every directory on the path was synced into its
// parent.
func TestPowerLossNewNestedPath(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := mustOpen(t, "new/sub/db", &Options{FS: fs})
	c := mustCollection(t, db, "power", mnemo.CollectionConfig{Dimension: 3, Index: mnemo.Flat})
	if _, err := c.Upsert(ctx, batchOf(0)...); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	db.Close()
	checkBatches(t, crashed, "new/sub/db", 0, "after a power cut")
}

// TestPowerLossBackup: an acknowledged Backup into a new nested directory
// is there after a power cut that keeps only what was synced.
func TestPowerLossBackup(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := mustOpen(t, "db", &Options{FS: fs})
	defer db.Close()
	c := mustCollection(t, db, "power", mnemo.CollectionConfig{Dimension: 3, Index: mnemo.Flat})
	for b := range 3 {
		if _, err := c.Upsert(ctx, batchOf(b)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Backup(ctx, "backups/today/copy"); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	checkBatches(t, crashed, "backups/today/copy", 2, "the backup after a power cut")
}

func batchOf(b int) []mnemo.Record {
	recs := make([]mnemo.Record, 10)
	for i := range recs {
		recs[i] = powerRecord(b, i)
	}
	return recs
}

// TestPowerLossManifestMarker cuts the power right after Pebble creates
// a new manifest marker while reopening a database, keeping a random half
// of the directory entries not yet synced, for many random halves. Before
// markerFS, some clones kept the marker but not the MANIFEST it names,
// and the database no longer opened.
func TestPowerLossManifestMarker(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := mustOpen(t, "db", &Options{FS: fs})
	c := mustCollection(t, db, "power", mnemo.CollectionConfig{Dimension: 3, Index: mnemo.Flat})
	if _, err := c.Upsert(ctx, batchOf(0)...); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var clones []*vfs.MemFS
	var mu sync.Mutex
	h := &hookFS{FS: fs}
	h.after = func(n int64, op, name string) {
		if op == "create" && isMarker(fs, name) {
			mu.Lock()
			defer mu.Unlock()
			for seed := range uint64(64) {
				clones = append(clones, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(seed, uint64(n)))}))
			}
		}
	}
	db = mustOpen(t, "db", &Options{FS: h})
	db.Close()
	if len(clones) == 0 {
		t.Fatal("reopening created no manifest marker")
	}
	for i, crashed := range clones {
		checkBatches(t, crashed, "db", 0, fmt.Sprintf("clone %d", i))
	}
	t.Logf("%d clones after a marker was created, all open", len(clones))
}

// TestPowerLoss runs a workload of writes, Close, reopen, checkpoints and
// a backup, and cuts the power before random filesystem operations,
// keeping 0, 30 or 50% of what was not synced. Every clone must open and
// hold every batch acknowledged before the cut (and no batch in part).
// MNEMO_POWERLOSS_POINTS sets how many cuts (default 60).
func TestPowerLoss(t *testing.T) {
	points := 60
	if s := os.Getenv("MNEMO_POWERLOSS_POINTS"); s != "" {
		points, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		points = 10
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	// One run without a cut counts the operations.
	total := powerWorkload(t, &hookFS{FS: vfs.NewCrashableMem()}, nil)
	var backups, opened int
	for p := range points {
		at := 1 + r.Int64N(total)
		pct := []int{0, 30, 50}[p%3]
		fs := vfs.NewCrashableMem()
		var crashed *vfs.MemFS
		var ackedAt int
		var backupAt bool
		h := &hookFS{FS: fs}
		var st powerState
		h.before = func(n int64, op, name string) {
			if n == at {
				st.mu.Lock()
				ackedAt, backupAt = st.acked, st.backedUp
				st.mu.Unlock()
				crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(seed, uint64(p)))})
			}
		}
		powerWorkload(t, h, &st)
		if crashed == nil {
			continue // this run had fewer operations than the counting run
		}
		what := fmt.Sprintf("cut %d before operation %d of %d, %d%% of unsynced data kept", p, at, total, pct)
		checkBatches(t, crashed, "db", ackedAt, what)
		opened++
		if backupAt {
			checkBatches(t, crashed, "backup", 3, what+", the backup")
			backups++
		}
	}
	t.Logf("%d crash points over %d operations: every clone opened with every acknowledged batch (%d with an acknowledged backup)", opened, total, backups)
}

// powerState is what the workload had acknowledged.
type powerState struct {
	mu       sync.Mutex
	acked    int
	backedUp bool
}

func (s *powerState) ack(b int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.acked = b
	s.mu.Unlock()
}

// powerWorkload writes batches 0..7 across three opens of "db" on fs,
// with checkpoints and a backup of batches 0..3, and returns how many
// operations it made.
func powerWorkload(t *testing.T, h *hookFS, st *powerState) int64 {
	t.Helper()
	if st != nil {
		st.acked = -1
	}
	batch := 0
	for round := range 3 {
		db, err := Open("db", &Options{FS: h, CheckpointEvery: 15})
		if err != nil {
			t.Fatalf("workload open %d: %v", round, err)
		}
		c, err := db.CreateCollection(ctx, "power", mnemo.CollectionConfig{Dimension: 3, M: 4})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if batch == 8 {
				break
			}
			if _, err := c.Upsert(ctx, batchOf(batch)...); err != nil {
				t.Fatal(err)
			}
			st.ack(batch)
			if batch == 3 {
				if err := db.Backup(ctx, "backup"); err != nil {
					t.Fatal(err)
				}
				if st != nil {
					st.mu.Lock()
					st.backedUp = true
					st.mu.Unlock()
				}
			}
			batch++
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return h.n.Load()
}
