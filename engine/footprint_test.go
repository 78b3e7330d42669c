package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// footprintCollections is how many one-record collections
// TestCollectionFootprint creates per case: enough that the per-collection
// figure is not lost in the noise of the heap (Pebble's memtables grow as
// the records arrive), few enough to run in seconds on a disk without
// fsync (noSyncFS).
const footprintCollections = 1000

// TestCollectionFootprint checks that an idle collection costs memory in
// proportion to what it holds: n one-record collections, measured as the
// growth of the heap in use (after garbage collections, with every
// collection still referenced), must stay under footprintBound each, plus their vectors,
// both as created and as loaded again by Open (from their checkpoints). A
// per-collection cost that was fixed and sized for hundreds of records
// (a preallocated chunk of the graph, the writer locks of a large graph, a
// text index's arrays) fails it. It measures memory, not time.
func TestCollectionFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("creates thousands of collections")
	}
	skipUnderRace(t, "creates thousands of collections")
	// The adapters' default: the offline embedder's 1024 dimensions, cosine,
	// HNSW M 16, with a full-text index; then a small dimension, no text,
	// SQ8 and the flat index.
	for _, tc := range []struct {
		name string
		cfg  mnemo.CollectionConfig
	}{
		{"adapters/hnsw-1024-text", mnemo.CollectionConfig{Dimension: 1024}},
		{"hnsw-8-text", mnemo.CollectionConfig{Dimension: 8}},
		{"hnsw-1024-notext", mnemo.CollectionConfig{Dimension: 1024, Text: mnemo.TextConfig{Disabled: true}}},
		{"hnsw-1024-sq8", mnemo.CollectionConfig{Dimension: 1024, Quantize: "sq8"}},
		{"flat-1024-text", mnemo.CollectionConfig{Dimension: 1024, Index: mnemo.Flat}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created, reopened := heapPerCollection(t, footprintCollections, tc.cfg)
			// What the record itself needs: its vector, and its codes
			// under SQ8.
			vectors := 4 * tc.cfg.Dimension
			if tc.cfg.Quantize == "sq8" {
				vectors += tc.cfg.Dimension
			}
			bound := float64(footprintBound + vectors)
			t.Logf("%d one-record collections: %.1f KiB each as created, %.1f KiB as reopened (bound %.1f KiB)",
				footprintCollections, created/1024, reopened/1024, bound/1024)
			if created > bound || reopened > bound {
				t.Errorf("a one-record collection holds %.1f KiB of heap as created and %.1f KiB as reopened, want under %.1f KiB (64 KiB + its vector)",
					created/1024, reopened/1024, bound/1024)
			}
		})
	}
}

// footprintBound is what a one-record collection may hold beyond its
// vector: its maps, its text index, its empty graph and its log handle.
const footprintBound = 64 << 10

// heapPerCollection opens a database, creates n collections of cfg with one
// record each (a short text, a vector of cfg's dimension), and returns the
// growth of the heap in use divided by n; then it closes the database and
// returns the same for opening it again. Some collections are made first
// so that what a database allocates once (Pebble's memtable, caches) is
// not counted in the first figure; the second counts it, spread over n.
func heapPerCollection(t *testing.T, n int, cfg mnemo.CollectionConfig) (created, reopened float64) {
	dir := t.TempDir()
	opts := &Options{FS: noSyncFS{vfs.Default}, NoSync: true, CheckpointEvery: -1}
	db := mustOpen(t, dir, opts)
	v := make([]float32, cfg.Dimension)
	add := func(name string, i int) *Collection {
		c := mustCollection(t, db, name, cfg)
		for j := range v {
			v[j] = float32(math.Sin(float64(i*len(v) + j + 1)))
		}
		rec := mnemo.Record{ID: "r", Vector: v, Content: fmt.Sprintf("the note of user %d about the weather in spring", i)}
		if _, err := c.Upsert(ctx, rec); err != nil {
			t.Fatal(err)
		}
		return c
	}
	const warm = 20
	for i := range warm {
		add(fmt.Sprintf("warm-%d", i), i)
	}
	before := heapInuse()
	cs := make([]*Collection, n)
	for i := range cs {
		cs[i] = add(fmt.Sprintf("c-%d", i), i)
	}
	after := heapInuse()
	runtime.KeepAlive(cs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	cs, db = nil, nil

	before2 := heapInuse()
	db = mustOpen(t, dir, opts)
	defer db.Close()
	if got := len(db.Collections()); got != n+warm {
		t.Fatalf("reopened with %d collections, want %d", got, n+warm)
	}
	after2 := heapInuse()
	return float64(int64(after)-int64(before)) / float64(n), float64(int64(after2)-int64(before2)) / float64(n)
}

// heapInuse returns the heap in use once two collections have run (the
// second empties the sync.Pools the first moved to their victim caches).
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// noSyncFS is the disk without fsync: a test that measures memory need not
// wait for the disk, and on disk (unlike in memory) Pebble's files are not
// on the heap being measured.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return noSync(fs.FS.Create(name, c))
}

func (fs noSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return noSync(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs noSyncFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return noSync(fs.FS.ReuseForWrite(old, name, c))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) { return noSync(fs.FS.OpenDir(name)) }

func noSync(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                { return nil }
func (noSyncFile) SyncData() error            { return nil }
func (noSyncFile) SyncTo(int64) (bool, error) { return true, nil }
