package index

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// BenchmarkSearchScaling measures how search throughput scales from one
// goroutine to two on a shared machine, where two runs of the same code a
// second apart can differ by more than the scaling being measured. Each of
// b.N rounds (run it with -benchtime 15x) searches for 100 ms on one
// goroutine and then on two, and then does the same with a control that
// only does arithmetic; it reports the median ratio of the rounds as "x2"
// and the control's as "x2-control", which shows what a second core gave
// at the time.
func BenchmarkSearchScaling(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2")
	}
	h, queries := benchSet()
	for _, ef := range []int{16, 64, 128} {
		b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
			opts := &SearchOptions{Ef: ef}
			search := func(dst []Result, i int) []Result {
				dst, err := h.Search(dst, queries[i%len(queries)], 10, opts)
				if err != nil {
					b.Error(err)
				}
				return dst
			}
			spin := func(dst []Result, i int) []Result {
				x := uint64(i)
				for range 20000 {
					x = x*6364136223846793005 + 1442695040888963407
				}
				return dst[:x&1]
			}
			var ratios, control []float64
			for range b.N {
				ratios = append(ratios, throughput(2, search)/throughput(1, search))
				control = append(control, throughput(2, spin)/throughput(1, spin))
			}
			b.ReportMetric(median(ratios), "x2")
			b.ReportMetric(median(control), "x2-control")
		})
	}
}

// throughput runs work on g goroutines for 100 ms and returns calls per
// second; each goroutine passes work its own result buffer and a running
// call number (which picks the query).
func throughput(g int, work func([]Result, int) []Result) float64 {
	const d = 100 * time.Millisecond
	var calls atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]Result, 0, 10)
			i := w * 7919 // the goroutines start on different queries
			for time.Since(start) < d {
				for range 16 {
					dst = work(dst, i)
					i++
				}
				calls.Add(16)
			}
		}()
	}
	wg.Wait()
	return float64(calls.Load()) / time.Since(start).Seconds()
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	return y[len(y)/2]
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
