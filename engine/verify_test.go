package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestVerifyWhileWriting runs Verify again and again while writers
// upsert and delete: each collection is checked at one moment, so no
// write in flight shows as a problem.
func TestVerifyWhileWriting(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "db"), &Options{NoSync: true, CheckpointEvery: 300})
	defer db.Close()
	c := mustCollection(t, db, "docs", mnemo.CollectionConfig{Dimension: 4})
	recs := make([]mnemo.Record, 400)
	for i := range recs {
		recs[i] = mnemo.Record{ID: fmt.Sprintf("r%03d", i), Vector: []float32{1, float32(i % 7), float32(i % 11), float32(i % 13)}}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			for {
				select {
				case <-stop:
					return
				default:
				}
				r := recs[rng.IntN(len(recs))]
				if rng.IntN(3) == 0 {
					c.Delete(ctx, r.ID)
				} else if _, err := c.Upsert(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		ps, err := db.Verify(ctx)
		if err != nil || len(ps) > 0 {
			close(stop)
			wg.Wait()
			t.Fatal(ps, err)
		}
	}
	close(stop)
	wg.Wait()
}
