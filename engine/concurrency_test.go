package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"sync"
	"testing"
)

// TestConcurrentUse runs writers, deleters, readers, queries and
// checkpoints on one collection at once (run with -race), then checks that
// the records are exactly the last writes and that the index agrees.
func TestConcurrentUse(t *testing.T) {
	db := mustOpen(t, t.TempDir(), &Options{CheckpointEvery: 25, NoSync: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim, M: 6, EfConstruction: 40})
	const writers, batches = 4, 60
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 0; n < batches; n++ {
				b := w*batches + n
				if _, err := c.Upsert(ctx, crashBatchRecords(b)...); err != nil {
					t.Error(err)
					return
				}
				if n%3 == 2 { // delete the previous batch's records again
					prev := crashBatchRecords(b - 1)
					ids := make([]string, len(prev))
					for i, r := range prev {
						ids[i] = r.ID
					}
					if _, err := c.Delete(ctx, ids...); err != nil {
						t.Error(err)
						return
					}
				}
				f, _ := mnemo.ParseFilter(fmt.Sprintf(`{"tag": "t%d"}`, n%5))
				if _, err := c.Query(ctx, mnemo.Query{Vector: crashRecord(b, 0).Vector, K: 5, Filter: f}); err != nil {
					t.Error(err)
					return
				}
				if n%20 == 0 {
					if err := c.Checkpoint(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			c.Get(ctx, crashRecord(i, 1).ID)
			c.Count()
			if _, err := db.Stats(ctx); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	deleted := map[int]bool{}
	for w := 0; w < writers; w++ {
		for n := 2; n < batches; n += 3 {
			deleted[w*batches+n-1] = true
		}
	}
	want := 0
	for b := 0; b < writers*batches; b++ {
		if !deleted[b] {
			want++
		}
	}
	if c.Count() != want*crashBatch {
		t.Fatalf("%d records, want %d", c.Count(), want*crashBatch)
	}
	verifyBatches(t, c, -1)
}
