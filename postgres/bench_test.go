package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/bench/retrieval"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/internal/vecio"
	"github.com/mnemodb/mnemo/memory/embed"
)

// The benchmarks put the embedded engine and PostgreSQL side by side on
// the same data in one run: retrieval quality (LoCoMo evidence recall@10,
// Cranfield nDCG@10; text, vector and hybrid), latency and write
// throughput, and HNSW recall and queries/s (MNEMO_ANN_DIR). Data comes
// from ../shared/data relative to the module root; each benchmark skips
// when its data or the server is absent.
const dataDir = "../../shared/data"

type namedStore struct {
	name  string
	store mnemo.Store
}

// stores returns an on-disk engine database (fsynced writes, as
// PostgreSQL's commits are) and a fresh PostgreSQL schema.
func stores(b *testing.B) []namedStore {
	b.Helper()
	pg := openFresh(b)
	b.Cleanup(func() { pg.Close() })
	db, err := engine.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return []namedStore{{"engine", db.Store()}, {"postgres", pg}}
}

// loadLoCoMo reads the LoCoMo conversations through bench/retrieval's
// loader, skipping when the data is absent.
func loadLoCoMo(b *testing.B) ([]retrieval.Turn, []retrieval.Question) {
	l, err := retrieval.LoadLoCoMo(filepath.Join(dataDir, "locomo-dev"))
	if errors.Is(err, retrieval.ErrNoData) {
		b.Skipf("data not present: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	var turns []retrieval.Turn
	for _, conv := range l.Convs {
		turns = append(turns, l.Turns[conv]...)
	}
	return turns, l.Questions
}

var modes = []mnemo.Mode{mnemo.ModeText, mnemo.ModeVector, mnemo.ModeHybrid}

// query builds the query of a mode for a text and its vector.
func query(mode mnemo.Mode, text string, vec []float32, k int) mnemo.Query {
	q := mnemo.Query{Mode: mode, K: k}
	if mode != mnemo.ModeVector {
		q.Text = text
	}
	if mode != mnemo.ModeText {
		q.Vector = vec
	}
	return q
}

func mustEmbed(b *testing.B, e embed.Embedder, texts []string) [][]float32 {
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		b.Fatal(err)
	}
	return vecs
}

// BenchmarkLoCoMo: each conversation's turns ("Speaker: text", the
// default hashing embedder) in a collection of their own; evidence
// recall@10 over the questions, by mode, on both backends.
func BenchmarkLoCoMo(b *testing.B) {
	turns, qas := loadLoCoMo(b)
	ctx := context.Background()
	emb, _ := embed.NewHashing(0)
	for _, ns := range stores(b) {
		b.Run(ns.name, func(b *testing.B) {
			for b.Loop() {
				cols := map[string]mnemo.Collection{}
				var recs []mnemo.Record
				var texts []string
				for _, t := range turns {
					texts = append(texts, t.Speaker+": "+t.Text)
				}
				vecs := mustEmbed(b, emb, texts)
				for i, t := range turns {
					recs = append(recs, mnemo.Record{ID: t.DiaID, Vector: vecs[i], Content: texts[i],
						Metadata: map[string]any{"speaker": t.Speaker, "session": t.Session, "date": t.DateTime}})
				}
				for i, t := range turns {
					c := cols[t.Conv]
					if c == nil {
						var err error
						c, err = ns.store.CreateCollection(ctx, "locomo-"+t.Conv, mnemo.CollectionConfig{Dimension: emb.Dimension(), Embedder: emb.Identity()})
						if err != nil {
							b.Fatal(err)
						}
						cols[t.Conv] = c
					}
					if _, err := c.Upsert(ctx, recs[i]); err != nil {
						b.Fatal(err)
					}
				}
				qtexts := make([]string, len(qas))
				for i, q := range qas {
					qtexts[i] = q.Text
				}
				qvecs := mustEmbed(b, emb, qtexts)
				for _, mode := range modes {
					var sum float64
					for i, q := range qas {
						hits, err := cols[q.Conv].Query(ctx, query(mode, q.Text, qvecs[i], 10))
						if err != nil {
							b.Fatal(err)
						}
						found := 0
						for _, h := range hits {
							if slices.Contains(q.Evidence, h.Record.ID) {
								found++
							}
						}
						sum += float64(found) / float64(len(q.Evidence))
					}
					b.ReportMetric(sum/float64(len(qas)), string(mode)+"-recall@10")
				}
				for name := range cols {
					if err := ns.store.DropCollection(ctx, "locomo-"+name); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkCranfield: the 1,400 Cranfield documents in one collection
// (default hashing embedder); nDCG@10 over the 225 queries with graded
// judgements, by mode, on both backends.
func BenchmarkCranfield(b *testing.B) {
	cf, err := retrieval.LoadCranfield(filepath.Join(dataDir, "cranfield"))
	if errors.Is(err, retrieval.ErrNoData) {
		b.Skipf("data not present: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	var ids, docs []string
	for i, d := range cf.Docs {
		if strings.TrimSpace(d) != "" {
			ids, docs = append(ids, cf.DocIDs[i]), append(docs, d)
		}
	}
	qids, queries, rel := cf.QueryIDs, cf.Querys, cf.Gain
	ctx := context.Background()
	emb, _ := embed.NewHashing(0)
	vecs := mustEmbed(b, emb, docs)
	qvecs := mustEmbed(b, emb, queries)
	for _, ns := range stores(b) {
		b.Run(ns.name, func(b *testing.B) {
			for b.Loop() {
				c, err := ns.store.CreateCollection(ctx, "cranfield", mnemo.CollectionConfig{Dimension: emb.Dimension(), Embedder: emb.Identity()})
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(docs); i += 100 {
					var batch []mnemo.Record
					for j := i; j < min(i+100, len(docs)); j++ {
						batch = append(batch, mnemo.Record{ID: ids[j], Vector: vecs[j], Content: docs[j]})
					}
					if _, err := c.Upsert(ctx, batch...); err != nil {
						b.Fatal(err)
					}
				}
				for _, mode := range modes {
					var sum float64
					judged := 0
					for i, q := range queries {
						r := rel[qids[i]]
						if len(r) == 0 {
							continue
						}
						judged++
						hits, err := c.Query(ctx, query(mode, q, qvecs[i], 10))
						if err != nil {
							b.Fatal(err)
						}
						ranked := make([]string, len(hits))
						for j, h := range hits {
							ranked[j] = h.Record.ID
						}
						sum += retrieval.NDCG(ranked, r, 10)
					}
					b.ReportMetric(sum/float64(judged), string(mode)+"-nDCG@10")
				}
				if err := ns.store.DropCollection(ctx, "cranfield"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds())
}

// BenchmarkLatency loads MNEMO_PG_BENCH_N (default 10,000) LoCoMo turns
// (cycled, hashing embedder, 384 dimensions) into both backends in
// fsynced batches of 100, then times single-record upserts and the
// LoCoMo questions as text, vector and hybrid queries (k 10), alternating
// the backends query by query so that both meet the same machine noise.
func BenchmarkLatency(b *testing.B) {
	turns, qas := loadLoCoMo(b)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_PG_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	emb, _ := embed.NewHashing(0)
	texts := make([]string, n)
	for i := range texts {
		t := turns[i%len(turns)]
		texts[i] = fmt.Sprintf("%s: %s (%d)", t.Speaker, t.Text, i/len(turns))
	}
	vecs := mustEmbed(b, emb, texts)
	qtexts := make([]string, len(qas))
	for i, q := range qas {
		qtexts[i] = q.Text
	}
	qvecs := mustEmbed(b, emb, qtexts)
	ss := stores(b)
	for b.Loop() {
		cols := make([]mnemo.Collection, len(ss))
		for i, ns := range ss {
			c, err := ns.store.CreateCollection(ctx, "latency", mnemo.CollectionConfig{Dimension: emb.Dimension()})
			if err != nil {
				b.Fatal(err)
			}
			cols[i] = c
			start := time.Now()
			for j := 0; j < n; j += 100 {
				var batch []mnemo.Record
				for k := j; k < min(j+100, n); k++ {
					batch = append(batch, mnemo.Record{ID: fmt.Sprintf("t%06d", k), Vector: vecs[k], Content: texts[k], Metadata: map[string]any{"i": k}})
				}
				if _, err := c.Upsert(ctx, batch...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), ns.name+"-batch-records/s")
		}
		single := make([][]time.Duration, len(ss))
		for j := range 200 {
			for i, c := range cols {
				start := time.Now()
				if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprintf("s%04d", j), Vector: vecs[j], Content: texts[j]}); err != nil {
					b.Fatal(err)
				}
				single[i] = append(single[i], time.Since(start))
			}
		}
		for i, ns := range ss {
			b.ReportMetric(percentile(single[i], 0.5), ns.name+"-upsert-p50-us")
		}
		for _, mode := range modes {
			lat := make([][]time.Duration, len(ss))
			for j := range min(500, len(qas)) {
				for i, c := range cols {
					start := time.Now()
					if _, err := c.Query(ctx, query(mode, qtexts[j], qvecs[j], 10)); err != nil {
						b.Fatal(err)
					}
					lat[i] = append(lat[i], time.Since(start))
				}
			}
			for i, ns := range ss {
				b.ReportMetric(percentile(lat[i], 0.5), ns.name+"-"+string(mode)+"-p50-us")
				b.ReportMetric(percentile(lat[i], 0.99), ns.name+"-"+string(mode)+"-p99-us")
			}
		}
		for _, ns := range ss {
			if err := ns.store.DropCollection(ctx, "latency"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkANN loads an annset directory (MNEMO_ANN_DIR: base.fvecs,
// query.fvecs, groundtruth.ivecs; cosine) into both backends at matched
// HNSW settings (M 16, efConstruction 200), then reports recall@10 and
// queries/s (one goroutine) for ef_search 10 to 160, and the load rate.
func BenchmarkANN(b *testing.B) {
	dir := os.Getenv("MNEMO_ANN_DIR")
	if dir == "" {
		b.Skip("MNEMO_ANN_DIR is not set (an annset output directory)")
	}
	base, err := vecio.ReadFvecsFile(filepath.Join(dir, "base.fvecs"), 0)
	if err != nil {
		b.Fatal(err)
	}
	queries, err := vecio.ReadFvecsFile(filepath.Join(dir, "query.fvecs"), 0)
	if err != nil {
		b.Fatal(err)
	}
	gt, err := vecio.ReadIvecsFile(filepath.Join(dir, "groundtruth.ivecs"), 0)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cfg := mnemo.CollectionConfig{Dimension: len(base[0]), M: 16, EfConstruction: 200, Text: mnemo.TextConfig{Disabled: true}}
	for _, ns := range stores(b) {
		b.Run(ns.name, func(b *testing.B) {
			for b.Loop() {
				c, err := ns.store.CreateCollection(ctx, "ann", cfg)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for i := 0; i < len(base); i += 1000 {
					var batch []mnemo.Record
					for j := i; j < min(i+1000, len(base)); j++ {
						batch = append(batch, mnemo.Record{ID: strconv.Itoa(j), Vector: base[j]})
					}
					if _, err := c.Upsert(ctx, batch...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(base))/time.Since(start).Seconds(), "load-vectors/s")
				for _, ef := range []int{10, 20, 40, 80, 160} {
					found := 0
					start := time.Now()
					for qi, q := range queries {
						hits, err := c.Query(ctx, mnemo.Query{Vector: q, K: 10, Ef: ef})
						if err != nil {
							b.Fatal(err)
						}
						for _, h := range hits {
							id, _ := strconv.Atoi(h.Record.ID)
							if slices.Contains(gt[qi][:10], int32(id)) {
								found++
							}
						}
					}
					qps := float64(len(queries)) / time.Since(start).Seconds()
					b.ReportMetric(float64(found)/float64(10*len(queries)), fmt.Sprintf("ef%d-recall@10", ef))
					b.ReportMetric(qps, fmt.Sprintf("ef%d-q/s", ef))
				}
				if err := ns.store.DropCollection(ctx, "ann"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
