package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/bench"
	"github.com/mnemodb/mnemo/index"
)

// Engine benchmarks on the clustered synthetic set of package bench
// (benchN x 128, cosine, 100 clusters, seed 1; MNEMO_ENGINE_N overrides the
// default 20,000), or on the annset files in MNEMO_ANN_DIR when it is set. The comparisons with
// the raw index are made in the same run. Larger runs are made by hand:
//
//	go test -run '^$' -bench . -benchtime 1x ./engine/

var benchN = func() int {
	if n, err := strconv.Atoi(os.Getenv("MNEMO_ENGINE_N")); err == nil && n > 0 {
		return n
	}
	return 20000
}()

func benchVectors(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, seed))
	centres := make([][]float32, 100)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(r.NormFloat64()*0.5)
		}
		out[i] = v
	}
	return out
}

var benchData = sync.OnceValues(func() (base, queries [][]float32) {
	if dir := os.Getenv("MNEMO_ANN_DIR"); dir != "" {
		ds, err := bench.LoadDir(dir, index.Cosine)
		if err != nil {
			panic(err)
		}
		return ds.Base, ds.Queries
	}
	ds := bench.Synthetic(bench.SyntheticParams{N: benchN, Queries: 500, Dim: 128, Clusters: 100, Seed: 1, Metric: index.Cosine})
	return ds.Base, ds.Queries
})

// BenchmarkBulkLoad loads the set through the engine in batches of 1,000
// with Sync, and through the raw index, and reports both rates.
func BenchmarkBulkLoad(b *testing.B) {
	vecs, _ := benchData()
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			h, _ := index.NewHNSW(128, index.Cosine, nil)
			for i, v := range vecs {
				h.Add(uint64(i), v)
			}
		}
		b.ReportMetric(float64(b.N*len(vecs))/b.Elapsed().Seconds(), "vectors/s")
	})
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			db, _ := Open(b.TempDir(), &Options{CheckpointEvery: -1})
			c, _ := db.CreateCollection(ctx, "c", CollectionConfig{Dimension: 128})
			for lo := 0; lo < len(vecs); lo += 1000 {
				batch := make([]Record, 0, 1000)
				for i := lo; i < min(lo+1000, len(vecs)); i++ {
					batch = append(batch, Record{ID: fmt.Sprint(i), Vector: vecs[i], Metadata: map[string]any{"i": i}})
				}
				if _, err := c.Upsert(ctx, batch...); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			db.Close()
			b.StartTimer()
		}
		b.ReportMetric(float64(b.N*len(vecs))/b.Elapsed().Seconds(), "vectors/s")
	})
}

// BenchmarkSyncUpsert measures single-record upserts with Sync from 1 and
// 8 goroutines: group commit lets concurrent writers share fsyncs.
func BenchmarkSyncUpsert(b *testing.B) {
	vecs := benchVectors(4096, 32, 2)
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db, _ := Open(b.TempDir(), &Options{CheckpointEvery: -1})
			defer db.Close()
			c, _ := db.CreateCollection(ctx, "c", CollectionConfig{Dimension: 32, Index: Flat})
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1) - 1)
						if i >= b.N {
							return
						}
						if _, err := c.Upsert(ctx, Record{ID: fmt.Sprint(i), Vector: vecs[i%len(vecs)]}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "upserts/s")
		})
	}
}

// benchEngine is a loaded engine collection and the raw index over the same
// vectors, built once per process.
var benchEngine = sync.OnceValues(func() (*Collection, *index.HNSW) {
	vecs, _ := benchData()
	db, _ := Open("", &Options{InMemory: true, CheckpointEvery: -1, NoSync: true})
	c, _ := db.CreateCollection(ctx, "c", CollectionConfig{Dimension: 128})
	h, _ := index.NewHNSW(128, index.Cosine, nil)
	batch := make([]Record, 0, 1000)
	for i, v := range vecs {
		h.Add(uint64(i), v)
		batch = append(batch, Record{ID: fmt.Sprintf("%06d", i), Vector: v, Content: "text",
			Metadata: map[string]any{"p10": i%10 == 0, "p100": i%100 == 0, "p1000": i%1000 == 0}})
		if len(batch) == cap(batch) {
			c.Upsert(ctx, batch...)
			batch = batch[:0]
		}
	}
	return c, h
})

// BenchmarkQueryLatency compares a k=10 query through the engine (records
// read back included) with the raw index search at the same ef.
func BenchmarkQueryLatency(b *testing.B) {
	c, h := benchEngine()
	_, queries := benchData()
	b.Run("index", func(b *testing.B) {
		dst := make([]index.Result, 0, 10)
		i := 0
		for b.Loop() {
			dst, _ = h.Search(dst, queries[i%len(queries)], 10, &index.SearchOptions{Ef: 64})
			i++
		}
	})
	b.Run("engine", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := c.Query(ctx, Query{Vector: queries[i%len(queries)], K: 10, Ef: 64}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkFilteredQuery reports recall@10 against the exact filtered
// answer, and the plan chosen, at 10%, 1% and 0.1% selectivity.
func BenchmarkFilteredQuery(b *testing.B) {
	c, _ := benchEngine()
	_, queries := benchData()
	queries = queries[:min(200, len(queries))]
	for _, field := range []string{"p10", "p100", "p1000"} {
		b.Run(field, func(b *testing.B) {
			f, _ := ParseFilter(fmt.Sprintf(`{%q: true}`, field))
			var sum float64
			var plan Plan
			for _, q := range queries {
				got, p, err := c.QueryPlan(ctx, Query{Vector: q, K: 10, Filter: f})
				if err != nil {
					b.Fatal(err)
				}
				want, _ := c.Query(ctx, Query{Vector: q, K: 10, Filter: f, Exact: true})
				in := map[string]bool{}
				for _, h := range want {
					in[h.Record.ID] = true
				}
				hit := 0
				for _, h := range got {
					if in[h.Record.ID] {
						hit++
					}
				}
				sum += float64(hit) / float64(max(len(want), 1))
				plan = p
			}
			i := 0
			b.ResetTimer()
			for b.Loop() {
				c.Query(ctx, Query{Vector: queries[i%len(queries)], K: 10, Filter: f})
				i++
			}
			b.ReportMetric(sum/float64(len(queries)), "recall@10")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.Logf("plan %s", plan)
		})
	}
}

// BenchmarkReopen reports the time to reopen a database from its
// checkpoint and the time to rebuild the index from the records (the
// checkpoint removed), and their ratio.
func BenchmarkReopen(b *testing.B) {
	vecs, _ := benchData()
	dir := b.TempDir()
	db, _ := Open(dir, &Options{CheckpointEvery: -1, NoSync: true})
	c, _ := db.CreateCollection(ctx, "c", CollectionConfig{Dimension: 128})
	for lo := 0; lo < len(vecs); lo += 1000 {
		var batch []Record
		for i := lo; i < min(lo+1000, len(vecs)); i++ {
			batch = append(batch, Record{ID: fmt.Sprint(i), Vector: vecs[i]})
		}
		c.Upsert(ctx, batch...)
	}
	db.Close()
	var fromCheckpoint, rebuild time.Duration
	for b.Loop() {
		t0 := time.Now()
		db, err := Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		fromCheckpoint += time.Since(t0)
		c, _ := db.Collection("c")
		desc, _, _ := db.readDesc(c.id)
		db.Close()
		// Remove the checkpoint: the next open must rebuild (and writes a
		// new checkpoint, which the next iteration loads).
		os.Remove(filepath.Join(dir, checkpointDir, desc.File))
		t0 = time.Now()
		db, err = Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		rebuild += time.Since(t0)
		db.Close()
	}
	b.ReportMetric(fromCheckpoint.Seconds()/float64(b.N), "checkpoint-open-s")
	b.ReportMetric(rebuild.Seconds()/float64(b.N), "rebuild-open-s")
	b.ReportMetric(rebuild.Seconds()/fromCheckpoint.Seconds(), "rebuild/checkpoint")
}
