package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"testing"

	"github.com/mnemodb/mnemo/index"
)

// compactProbe is an HNSW index whose Compact first runs during.
type compactProbe struct {
	*index.HNSW
	during func()
}

func (p compactProbe) Compact() int {
	p.during()
	return p.HNSW.Compact()
}

// TestCheckpointCompactsBesideWrites: a checkpoint compacts the index
// without holding the collection's write lock, so an Upsert and a Query
// made while the index compacts complete (the index itself lets them run
// during Compact: see index's TestCompactBesideSearches). The record
// written meanwhile is in the checkpoint or the log after it: the
// database reopens from the checkpoint with every record.
func TestCheckpointCompactsBesideWrites(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, &Options{CheckpointEvery: -1})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 8})
	vecs := benchVectors(300, 8, 3)
	for i, v := range vecs[:200] {
		if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(i), Vector: v}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 60 {
		if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(i), Vector: vecs[200+i]}); err != nil {
			t.Fatal(err)
		}
	}
	h, ok := c.idx.(*index.HNSW)
	if !ok {
		t.Fatalf("index is a %T", c.idx)
	}
	if h.Deleted() != 60 {
		t.Fatalf("%d tombstones, want 60", h.Deleted())
	}
	calls := 0
	c.idx = compactProbe{h, func() {
		calls++
		if !c.writes.TryRLock() {
			t.Error("the write lock is held while the index compacts")
			return
		}
		c.writes.RUnlock()
		done := make(chan error)
		go func() {
			_, err := c.Upsert(ctx, mnemo.Record{ID: "during", Vector: vecs[299]})
			if err == nil {
				var hits []mnemo.Hit
				hits, err = c.Query(ctx, mnemo.Query{Vector: vecs[299], K: 1, Ef: 50})
				if err == nil && (len(hits) != 1 || hits[0].Record.ID != "during") {
					err = fmt.Errorf("query during compaction: %v", hits)
				}
			}
			done <- err
		}()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}}
	if err := c.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || h.Deleted() != 0 {
		t.Fatalf("%d compactions, %d tombstones left", calls, h.Deleted())
	}
	if err := h.Check(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, &Options{CheckpointEvery: -1})
	defer db.Close()
	c, err := db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.OpenedBy != "checkpoint+replay" || c.Count() != 201 {
		t.Fatalf("reopened by %s (%s) with %d records, want checkpoint+replay and 201", st.OpenedBy, st.RebuildReason, c.Count())
	}
	if _, found, err := c.Get(ctx, "during"); !found || err != nil {
		t.Fatalf("the record written during the compaction: %v %v", found, err)
	}
}
