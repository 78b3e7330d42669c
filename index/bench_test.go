package index

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// benchSet is a clustered set shared by the benchmarks in this file, built
// once per process: 20,000 x 128 under cosine, M=16, efConstruction=200.
// The recall and throughput comparisons on the standard datasets live in
// package bench.
var benchSet = sync.OnceValues(func() (*HNSW, [][]float32) {
	r := rand.New(rand.NewPCG(42, 42))
	vecs := clustered(r, 20000, 128, 50)
	h, _ := NewHNSW(128, Cosine, nil)
	for i, v := range vecs {
		if err := h.Add(uint64(i), v); err != nil {
			panic(err)
		}
	}
	return h, clustered(r, 1000, 128, 50)
})

// BenchmarkSearch measures one search at a few ef values. Run it with
// -cpu 1,2 to see how throughput scales with goroutines: each goroutine
// searches on its own, sharing the index.
func BenchmarkSearch(b *testing.B) {
	h, queries := benchSet()
	for _, ef := range []int{16, 64, 128} {
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
			b.ReportAllocs()
			opts := &SearchOptions{Ef: ef}
			b.RunParallel(func(pb *testing.PB) {
				dst := make([]Result, 0, 10)
				i := 0
				for pb.Next() {
					var err error
					dst, err = h.Search(dst, queries[i%len(queries)], 10, opts)
					if err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
