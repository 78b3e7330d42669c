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

// kernelSets are small graphs at the dimensions of the standard benchmark
// sets (clustered, M=16, efConstruction=200), built once per process.
var kernelSets = sync.OnceValue(func() map[string]struct {
	h       *HNSW
	queries [][]float32
} {
	sets := map[string]struct {
		h       *HNSW
		queries [][]float32
	}{}
	for _, c := range []struct {
		d, n   int
		metric Metric
	}{{25, 10000, Cosine}, {128, 10000, L2}, {784, 3000, L2}} {
		r := rand.New(rand.NewPCG(uint64(c.d), 1))
		vecs := clustered(r, c.n, c.d, 50)
		h, _ := NewHNSW(c.d, c.metric, nil)
		for i, v := range vecs {
			if err := h.Add(uint64(i), v); err != nil {
				panic(err)
			}
		}
		sets[fmt.Sprintf("d=%d/%s", c.d, c.metric)] = struct {
			h       *HNSW
			queries [][]float32
		}{h, clustered(r, 500, c.d, 50)}
	}
	return sets
})

// BenchmarkSearchKernels compares, in one process, a search that scores an
// expanded node's neighbours with one row-kernel call ("rows") against one
// single-pair kernel call per neighbour ("calls", vek's kernels on the
// accelerated path), at ef=10 and ef=40 on one goroutine. Run with -count
// and compare medians: the ratio is what the row kernels gain in the walk.
func BenchmarkSearchKernels(b *testing.B) {
	sets := kernelSets()
	for _, name := range []string{"d=25/cosine", "d=128/l2", "d=784/l2"} {
		set := sets[name]
		for _, ef := range []int{10, 40} {
			for _, path := range []string{"rows", "calls"} {
				b.Run(fmt.Sprintf("%s/ef=%d/%s", name, ef, path), func(b *testing.B) {
					scoreEachRow = path == "calls"
					defer func() { scoreEachRow = false }()
					opts := &SearchOptions{Ef: ef}
					dst := make([]Result, 0, 10)
					i := 0
					for b.Loop() {
						dst, _ = set.h.Search(dst, set.queries[i%len(set.queries)], 10, opts)
						i++
					}
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
				})
			}
		}
	}
}
