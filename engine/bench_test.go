package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

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
			c, _ := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 128})
			for lo := 0; lo < len(vecs); lo += 1000 {
				batch := make([]mnemo.Record, 0, 1000)
				for i := lo; i < min(lo+1000, len(vecs)); i++ {
					batch = append(batch, mnemo.Record{ID: fmt.Sprint(i), Vector: vecs[i], Metadata: map[string]any{"i": i}})
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
			c, _ := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 32, Index: mnemo.Flat})
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
						if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(i), Vector: vecs[i%len(vecs)]}); err != nil {
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
	c, _ := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 128})
	h, _ := index.NewHNSW(128, index.Cosine, nil)
	batch := make([]mnemo.Record, 0, 1000)
	for i, v := range vecs {
		h.Add(uint64(i), v)
		batch = append(batch, mnemo.Record{ID: fmt.Sprintf("%06d", i), Vector: v, Content: "text",
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
			if _, err := c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], K: 10, Ef: 64}); err != nil {
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
			f, _ := mnemo.ParseFilter(fmt.Sprintf(`{%q: true}`, field))
			var sum float64
			var plan Plan
			for _, q := range queries {
				got, p, err := c.QueryPlan(ctx, mnemo.Query{Vector: q, K: 10, Filter: f})
				if err != nil {
					b.Fatal(err)
				}
				want, _ := c.Query(ctx, mnemo.Query{Vector: q, K: 10, Filter: f, Exact: true})
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
				c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], K: 10, Filter: f})
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
	c, _ := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 128})
	for lo := 0; lo < len(vecs); lo += 1000 {
		var batch []mnemo.Record
		for i := lo; i < min(lo+1000, len(vecs)); i++ {
			batch = append(batch, mnemo.Record{ID: fmt.Sprint(i), Vector: vecs[i]})
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

// benchSentences returns n synthetic memories: 6 to 30 words drawn from a
// Zipf-distributed vocabulary of 20,000, so common words are common and
// rare ones rare, as in text.
func benchSentences(n int, seed uint64) []string { return benchWords(n, seed, 6, 30) }

// benchQuestions returns n synthetic questions of 3 to 8 words from the
// same vocabulary: a question's words once its stop words are gone.
func benchQuestions(n int, seed uint64) []string { return benchWords(n, seed, 3, 8) }

func benchWords(n int, seed uint64, lo, hi int) []string {
	r := rand.New(rand.NewPCG(seed, seed+1))
	z := rand.NewZipf(r, 1.1, 2, 19999)
	out := make([]string, n)
	var sb []byte
	for i := range out {
		sb = sb[:0]
		for w := range lo + r.IntN(hi-lo+1) {
			if w > 0 {
				sb = append(sb, ' ')
			}
			sb = append(sb, "w"...)
			sb = strconv.AppendUint(sb, z.Uint64(), 36)
		}
		out[i] = string(sb)
	}
	return out
}

// BenchmarkTextCost measures what the full-text index costs, side by side
// in one run on the same records (benchN x 128 with a synthetic sentence
// each): upsert throughput in batches of 256 with and without it, query
// latency of vector-only and hybrid queries (p50 and p99), the index's
// memory and stored bytes per record, and reopen time. By hand at 100,000:
//
//	MNEMO_ENGINE_N=100000 go test -run '^$' -bench TextCost -benchtime 1x ./engine/
func BenchmarkTextCost(b *testing.B) {
	base, queries := benchData()
	texts := benchSentences(len(base), 7)
	qtexts := benchQuestions(len(queries), 8)
	for b.Loop() {
		dirs := map[bool]string{}
		took := map[bool]time.Duration{}
		// Alternate the two builds in slices, so both see the same
		// machine.
		dbs := map[bool]*DB{}
		cols := map[bool]*Collection{}
		for _, text := range []bool{false, true} {
			dirs[text] = filepath.Join(b.TempDir(), "db")
			dbs[text] = mustOpen(b, dirs[text], &Options{NoSync: true})
			cols[text] = mustCollection(b, dbs[text], "c", mnemo.CollectionConfig{Dimension: len(base[0]), Text: mnemo.TextConfig{Disabled: !text}})
		}
		const batch = 256
		for start := 0; start < len(base); start += batch {
			end := min(start+batch, len(base))
			recs := make([]mnemo.Record, 0, end-start)
			for i := start; i < end; i++ {
				recs = append(recs, mnemo.Record{ID: strconv.Itoa(i), Vector: base[i], Content: texts[i]})
			}
			for _, text := range []bool{start%(2*batch) == 0, start%(2*batch) != 0} {
				t0 := time.Now()
				if _, err := cols[text].Upsert(ctx, recs...); err != nil {
					b.Fatal(err)
				}
				took[text] += time.Since(t0)
			}
		}
		rate := func(text bool) float64 { return float64(len(base)) / took[text].Seconds() }
		b.ReportMetric(rate(false), "upserts/s-without")
		b.ReportMetric(rate(true), "upserts/s-with")
		b.ReportMetric(rate(true)/rate(false), "upsert-ratio")

		c := cols[true]
		lat := map[string][]time.Duration{}
		for i, q := range queries {
			for _, mode := range []mnemo.Mode{mnemo.ModeVector, mnemo.ModeHybrid} {
				t0 := time.Now()
				if _, err := c.Query(ctx, mnemo.Query{Vector: q, Text: qtexts[i], Mode: mode, K: 10}); err != nil {
					b.Fatal(err)
				}
				lat[string(mode)] = append(lat[string(mode)], time.Since(t0))
			}
		}
		pct := func(ds []time.Duration, p float64) time.Duration {
			s := slices.Clone(ds)
			slices.Sort(s)
			return s[int(p*float64(len(s)-1))]
		}
		for _, mode := range []string{"vector", "hybrid"} {
			b.ReportMetric(float64(pct(lat[mode], 0.5).Microseconds()), "us-p50-"+mode)
			b.ReportMetric(float64(pct(lat[mode], 0.99).Microseconds()), "us-p99-"+mode)
		}
		b.ReportMetric(float64(pct(lat["hybrid"], 0.5))/float64(pct(lat["vector"], 0.5)), "hybrid/vector-p50")

		st, err := c.Stats(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(st.TextBytes)/float64(len(base)), "text-mem-B/record")
		var stored int64
		prefix := cidPrefix(tagText, c.id)
		it, _ := dbs[true].pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
		for ok := it.First(); ok; ok = it.Next() {
			stored += int64(len(it.Key()) + len(it.Value()))
		}
		it.Close()
		b.ReportMetric(float64(stored)/float64(len(base)), "text-stored-B/record")

		for _, text := range []bool{false, true} {
			dbs[text].Close()
		}
		for _, text := range []bool{false, true} {
			t0 := time.Now()
			db := mustOpen(b, dirs[text], nil)
			name := "without"
			if text {
				name = "with"
			}
			b.ReportMetric(float64(time.Since(t0).Milliseconds()), "reopen-ms-"+name)
			db.Close()
		}
	}
}

var textBench = sync.OnceValues(func() (*Collection, [][]float32) {
	base, queries := benchData()
	return textCollection(base, &Options{InMemory: true}, nil), queries
})

// textCollection builds a collection of base's vectors, each with a
// synthetic sentence and meta(i) as its metadata (meta nil: none), in
// batches of 1,000, in a database opened with opts.
func textCollection(base [][]float32, opts *Options, meta func(i int) map[string]any) *Collection {
	texts := benchSentences(len(base), 7)
	db, err := Open("", opts)
	if err != nil {
		panic(err)
	}
	c, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: len(base[0])})
	if err != nil {
		panic(err)
	}
	for start := 0; start < len(base); start += 1000 {
		var recs []mnemo.Record
		for i := start; i < min(start+1000, len(base)); i++ {
			r := mnemo.Record{ID: strconv.Itoa(i), Vector: base[i], Content: texts[i]}
			if meta != nil {
				r.Metadata = meta(i)
			}
			recs = append(recs, r)
		}
		if _, err := c.Upsert(ctx, recs...); err != nil {
			panic(err)
		}
	}
	return c
}

// BenchmarkQueryModes compares the three query modes on one collection
// (benchN records of 128 dimensions and a synthetic sentence each).
func BenchmarkQueryModes(b *testing.B) {
	c, queries := textBench()
	qtexts := benchQuestions(len(queries), 8)
	for _, mode := range []mnemo.Mode{mnemo.ModeVector, mnemo.ModeText, mnemo.ModeHybrid} {
		b.Run(string(mode), func(b *testing.B) {
			i := 0
			for b.Loop() {
				q := mnemo.Query{Vector: queries[i%len(queries)], Text: qtexts[i%len(queries)], Mode: mode, K: 10}
				if _, err := c.Query(ctx, q); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
