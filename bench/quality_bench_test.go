package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mnemodb/mnemo/index"
)

// BenchmarkDeletes deletes a random 30% of each dataset from an HNSW and
// reports recall@10 over the remaining vectors (ground truth recomputed) at
// ef 40 and 80: with the deletions tombstoned, after Compact, and for a
// fresh build of the same remaining vectors. The target is that the
// deleted index stays within 0.02 of the fresh build.
func BenchmarkDeletes(b *testing.B) {
	for _, ds := range datasets(b) {
		b.Run(ds.Name, func(b *testing.B) {
			for b.Loop() {
				r := rand.New(rand.NewPCG(30, 30))
				cfg := &Config{M: 16, EfC: 200}
				full, _ := NewBackend("hnsw", ds.Dim(), ds.Metric, cfg)
				fresh, _ := NewBackend("hnsw", ds.Dim(), ds.Metric, cfg)
				if _, err := Build(full, ds.Base, 2); err != nil {
					b.Fatal(err)
				}
				var kept [][]float32
				var keptIDs []int32
				for i := range ds.Base {
					if r.IntN(10) < 3 {
						full.Delete(uint64(i))
						continue
					}
					kept = append(kept, ds.Base[i])
					keptIDs = append(keptIDs, int32(i))
				}
				for j, v := range kept {
					if err := fresh.Add(uint64(keptIDs[j]), v); err != nil {
						b.Fatal(err)
					}
				}
				truth := GroundTruth(kept, ds.Queries, ds.Metric, 10)
				for _, row := range truth {
					for i, j := range row {
						row[i] = keptIDs[j]
					}
				}
				recallAt := func(idx index.Index, ef int) float64 {
					res := make([][]index.Result, len(ds.Queries))
					for i, q := range ds.Queries {
						res[i], _ = idx.Search(nil, q, 10, &index.SearchOptions{Ef: ef})
					}
					return Recall(res, truth, 10)
				}
				for _, ef := range []int{40, 80} {
					b.ReportMetric(recallAt(full, ef), fmt.Sprintf("recall-ef%d-tombstoned", ef))
				}
				full.(*index.HNSW).Compact()
				if err := full.(*index.HNSW).Check(); err != nil {
					b.Fatal(err)
				}
				for _, ef := range []int{40, 80} {
					b.ReportMetric(recallAt(full, ef), fmt.Sprintf("recall-ef%d-compacted", ef))
					b.ReportMetric(recallAt(fresh, ef), fmt.Sprintf("recall-ef%d-fresh", ef))
				}
			}
		})
	}
}

// BenchmarkFiltered reports recall@10 against the exact filtered answer and
// queries/s for filters admitting 10%, 1% and 0.1% of the keys, with the
// filtered graph walk (ef 64) and with the exact plan over the allow-list.
// It fails if any search returns fewer than min(10, admitted) results.
func BenchmarkFiltered(b *testing.B) {
	for _, ds := range datasets(b) {
		idx := built(b, ds, "hnsw").idx
		exact := built(b, ds, "flat").idx
		for _, permille := range []int{100, 10, 1} {
			admit := func(key uint64) bool { return (key*0x9e3779b97f4a7c15)>>32%1000 < uint64(permille) }
			var allow []uint64
			for i := range ds.Base {
				if admit(uint64(i)) {
					allow = append(allow, uint64(i))
				}
			}
			want := make([][]int32, len(ds.Queries))
			for i, q := range ds.Queries {
				res, _ := exact.Search(nil, q, 10, &index.SearchOptions{Filter: admit})
				for _, r := range res {
					want[i] = append(want[i], int32(r.Key))
				}
			}
			plans := map[string]*index.SearchOptions{
				"walk":  {Ef: 64, Filter: admit},
				"exact": {Keys: allow},
			}
			for _, plan := range []string{"walk", "exact"} {
				opts := plans[plan]
				b.Run(fmt.Sprintf("%s/admit=%.1f%%/%s", ds.Name, float64(permille)/10, plan), func(b *testing.B) {
					res := make([][]index.Result, len(ds.Queries))
					for i, q := range ds.Queries {
						res[i], _ = idx.Search(nil, q, 10, opts)
						if len(res[i]) != min(10, len(allow)) {
							b.Fatalf("query %d: %d results, %d admitted", i, len(res[i]), len(allow))
						}
					}
					dst := make([]index.Result, 0, 10)
					i := 0
					b.ResetTimer()
					for b.Loop() {
						dst, _ = idx.Search(dst, ds.Queries[i%len(ds.Queries)], 10, opts)
						i++
					}
					b.ReportMetric(Recall(res, want, 10), "recall@10")
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
					b.ReportMetric(float64(len(allow)), "admitted")
				})
			}
		}
	}
}
