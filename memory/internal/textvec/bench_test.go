package textvec_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
)

// BenchmarkFirstInsert times the first Insert of a new Space (as in a
// process that just opened the store) into a collection of 10,000
// memories: "scan" on a collection without a sequence, which Place scans
// for its largest position (what every collection cost before
// collections kept a sequence), "sequence" on one whose sequence is
// started, from which Place reserves. The backend is MNEMO_MEMORY_BACKEND's
// (see package memtest).
func BenchmarkFirstInsert(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	s := memtest.Store(b)
	sp, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
	c, err := sp.Collection(ctx, s, "memories", "bench")
	if err != nil {
		b.Fatal(err)
	}
	v, err := sp.Vector(ctx, "text", "the memory everyone shares")
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]mnemo.Record, 0, 500)
	for i := range n {
		text := fmt.Sprintf("memory %d of topic %d", i, i%97)
		v, err := sp.Vector(ctx, "text", text)
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, mnemo.Record{ID: fmt.Sprintf("m%05d", i), Vector: v, Content: text, Metadata: map[string]any{textvec.PosField: i}})
		if len(batch) == cap(batch) {
			if _, err := c.Upsert(ctx, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for _, tc := range []struct {
		name  string
		store mnemo.Store
	}{
		{"scan", &memtest.Faulty{Store: s, NoSequencer: true}},
		{"sequence", s},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if tc.name == "sequence" {
				// Start the sequence: the one scan of the collection's life.
				if _, err := sp.Place(ctx, c, 1); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				b.StopTimer()
				space, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
				bound, err := space.Bind(ctx, tc.store, "memories", "bench")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := space.Insert(ctx, bound, mnemo.Record{Vector: v, Content: "one more memory"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
