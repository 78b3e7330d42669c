package index

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkBuild measures building a 2,000 x 128 index from empty (M=16,
// efConstruction=100), on one goroutine and on GOMAXPROCS goroutines: the
// cost of inserts including the growth of an index's storage from its
// first node.
func BenchmarkBuild(b *testing.B) {
	vecs := clustered(rand.New(rand.NewPCG(7, 7)), 2000, 128, 20)
	for _, g := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("goroutines=%d", g), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, _ := NewHNSW(128, Cosine, &HNSWOptions{EfConstruction: 100})
				var wg sync.WaitGroup
				for w := range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < len(vecs); i += g {
							if err := h.Add(uint64(i), vecs[i]); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*len(vecs))/b.Elapsed().Seconds(), "vectors/s")
		})
	}
}

// BenchmarkTinyIndex measures making an index and adding one vector at
// the dimension of the adapters' offline embedder and at a small one, and
// reports the heap it allocated per index ("B/op" counts the garbage too).
func BenchmarkTinyIndex(b *testing.B) {
	for _, dim := range []int{8, 1024} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(i%7) + 1
			}
			b.ReportAllocs()
			for b.Loop() {
				h, _ := NewHNSW(dim, Cosine, nil)
				if err := h.Add(1, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
