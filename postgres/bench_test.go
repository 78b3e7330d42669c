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
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/bench/retrieval"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/internal/vecio"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/postgres"
)

// The benchmarks put the embedded engine and PostgreSQL side by side on
// the same data in one run: retrieval quality (LoCoMo evidence recall@10,
// Cranfield nDCG@10; text, vector and hybrid), write throughput, query
// latency and 8-client queries/s (BenchmarkSideBySide), and HNSW recall
// and queries/s (MNEMO_ANN_DIR). Data comes
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

func mustEmbed(b testing.TB, e embed.Embedder, texts []string) [][]float32 {
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

// BenchmarkSideBySide puts the engine and PostgreSQL side by side on the
// same records in one run. It loads MNEMO_PG_BENCH_N (default 10,000)
// LoCoMo turns ("Speaker: text (cycle)", cycled; offline hashing
// embedder, 384 dimensions; HNSW with the default config) into an on-disk
// engine database (fsynced writes, as PostgreSQL's commits are) and a
// PostgreSQL schema, in batches of 100, and reports for each backend:
//
//   - batch-records/s: the load's rate (only when this run loaded);
//   - append-records/s: 10 batches of 100 new records appended to the
//     loaded collection (deleted again at the end), alternating;
//   - upsert-p50-us: 200 single-record upserts of new records (deleted
//     again at the end);
//   - vector-, text- and hybrid-p50-us and -p99-us: up to 500 LoCoMo
//     questions per mode, k 10, the two backends alternating query by
//     query so that both meet the same machine noise. Vector queries set
//     no Ef, so each backend plans as it does for its users: the engine
//     scans exactly while n*(dimension+16) is at most 20,000*400 (at
//     384 dimensions, 10,000 records are scanned, 100,000 walk the
//     graph), PostgreSQL always walks pgvector's graph;
//   - hybrid-8clients-q/s: 8 goroutines asking hybrid questions without
//     pause, three rounds of 2 s per backend, the backends alternating
//     round by round.
//
// Each mode's first 20 questions are asked once on both, untimed, before
// the timed ones.
//
// Each figure comes as <figure>-engine, <figure>-postgres and
// <figure>-ratio, the PostgreSQL figure divided by the engine's (above 1
// a latency is longer on PostgreSQL, below 1 a rate is lower), and the
// run logs the same as a table.
//
// Loading 100,000 records into PostgreSQL takes long, so
// MNEMO_PG_BENCH_KEEP=DIR keeps the loaded data between runs: the engine
// database in DIR/engine and the PostgreSQL tables in the schema
// mnemo_bench of MNEMO_PG_DSN's database, one collection "sidebyside" in
// each. A run reuses a backend's collection when it holds exactly N
// records of this benchmark's config, and otherwise drops it and loads N
// again (so a run at another N, or one that stopped in the middle,
// reloads). Changing what is loaded or the schema needs a fresh start:
// remove DIR and DROP SCHEMA mnemo_bench CASCADE. For example:
//
//	MNEMO_PG_BENCH_N=100000 MNEMO_PG_BENCH_KEEP=/var/tmp/mnemo-bench \
//	  go test -run '^$' -bench SideBySide -benchtime 1x -timeout 3h ./postgres/
func BenchmarkSideBySide(b *testing.B) {
	turns, qas := loadLoCoMo(b)
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_PG_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	emb, _ := embed.NewHashing(384)
	cfg := mnemo.CollectionConfig{Dimension: emb.Dimension(), Embedder: emb.Identity()}
	recs := make([]mnemo.Record, n)
	texts := make([]string, n)
	for i := range texts {
		t := turns[i%len(turns)]
		texts[i] = fmt.Sprintf("%s: %s (%d)", t.Speaker, t.Text, i/len(turns))
	}
	for i, v := range mustEmbed(b, emb, texts) {
		recs[i] = mnemo.Record{ID: fmt.Sprintf("t%06d", i), Vector: v, Content: texts[i], Metadata: map[string]any{"i": i}}
	}
	qtexts := make([]string, min(500, len(qas)))
	for i := range qtexts {
		qtexts[i] = qas[i].Text
	}
	qvecs := mustEmbed(b, emb, qtexts)

	ss := sideBySideStores(b)
	var r sideBySide
	cols := make([]mnemo.Collection, len(ss))
	for i, ns := range ss {
		var indexLater func(context.Context) error
		if ns.name == "postgres" && os.Getenv("MNEMO_PG_BENCH_BULK") != "" {
			if keptDSN == "" {
				b.Fatal("MNEMO_PG_BENCH_BULK needs MNEMO_PG_BENCH_KEEP")
			}
			indexLater = func(ctx context.Context) error { return bulkIndex(ctx, keptDSN, cfg.WithDefaults()) }
		}
		c, rate, err := loadOrReuse(ctx, ns.store, cfg, recs, indexLater)
		if err != nil {
			b.Fatalf("%s: %v", ns.name, err)
		}
		cols[i] = c
		if rate > 0 {
			r[i].set("batch-records/s", rate)
		}
	}
	for _, mode := range modes { // warm-up, untimed
		for j := range min(20, len(qtexts)) {
			for _, c := range cols {
				if _, err := c.Query(ctx, query(mode, qtexts[j], qvecs[j], 10)); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for b.Loop() {
		// Single-record upserts, alternating, of records deleted below.
		single := make([][]time.Duration, len(cols))
		var singleIDs []string
		for j := range 200 {
			id := fmt.Sprintf("s%04d", j)
			singleIDs = append(singleIDs, id)
			for i, c := range cols {
				start := time.Now()
				if _, err := c.Upsert(ctx, mnemo.Record{ID: id, Vector: recs[j].Vector, Content: texts[j]}); err != nil {
					b.Fatal(err)
				}
				single[i] = append(single[i], time.Since(start))
			}
		}
		for i := range cols {
			r[i].set("upsert-p50-us", percentile(single[i], 0.5))
		}
		// Batches of 100 new records appended to the loaded collection,
		// alternating, deleted below: the write rate at N records, also
		// when the load was kept or bulk-built.
		var appended [2]time.Duration
		var appendIDs []string
		for j := range appendBatches {
			batch := make([]mnemo.Record, 100)
			for k := range batch {
				src := recs[(j*100+k)%n]
				batch[k] = mnemo.Record{ID: fmt.Sprintf("a%06d", j*100+k), Vector: src.Vector, Content: src.Content, Metadata: src.Metadata}
				appendIDs = append(appendIDs, batch[k].ID)
			}
			for i, c := range cols {
				start := time.Now()
				if _, err := c.Upsert(ctx, batch...); err != nil {
					b.Fatal(err)
				}
				appended[i] += time.Since(start)
			}
		}
		for i := range cols {
			r[i].set("append-records/s", float64(appendBatches*100)/appended[i].Seconds())
		}
		for _, mode := range modes {
			lat := make([][]time.Duration, len(cols))
			for j := range qtexts {
				for i, c := range cols {
					start := time.Now()
					if _, err := c.Query(ctx, query(mode, qtexts[j], qvecs[j], 10)); err != nil {
						b.Fatal(err)
					}
					lat[i] = append(lat[i], time.Since(start))
				}
			}
			for i := range cols {
				r[i].set(string(mode)+"-p50-us", percentile(lat[i], 0.5))
				r[i].set(string(mode)+"-p99-us", percentile(lat[i], 0.99))
			}
		}
		hybrid := make([]mnemo.Query, len(qtexts))
		for j := range hybrid {
			hybrid[j] = query(mnemo.ModeHybrid, qtexts[j], qvecs[j], 10)
		}
		done := make([]int, len(cols))
		var spent [2]time.Duration
		for range 3 {
			for i, c := range cols {
				start := time.Now()
				k, err := clients(ctx, c, hybrid, 8, 2*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				done[i] += k
				spent[i] += time.Since(start)
			}
		}
		for i := range cols {
			r[i].set("hybrid-8clients-q/s", float64(done[i])/spent[i].Seconds())
		}
		for _, c := range cols {
			if _, err := c.Delete(ctx, append(singleIDs, appendIDs...)...); err != nil {
				b.Fatal(err)
			}
		}
	}
	r.report(b, n)
}

// sideBySideStores returns the engine's store and PostgreSQL's: fresh
// ones, closed and removed when b ends, or the kept ones that
// MNEMO_PG_BENCH_KEEP names (see BenchmarkSideBySide).
func sideBySideStores(b *testing.B) []namedStore {
	keep := os.Getenv("MNEMO_PG_BENCH_KEEP")
	if keep == "" {
		return stores(b)
	}
	dsn := serverDSN(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS mnemo_bench")
	conn.Close(ctx)
	if err != nil {
		b.Fatal(err)
	}
	keptDSN = withSearchPath(b, dsn, "mnemo_bench")
	pg, err := postgres.Open(ctx, keptDSN, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pg.Close() })
	db, err := engine.Open(filepath.Join(keep, "engine"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return []namedStore{{"engine", db.Store()}, {"postgres", pg}}
}

// loadOrReuse returns s's collection "sidebyside" holding recs: the one
// there when it has cfg and len(recs) records, or else a new one, loaded
// in batches of 100, with the load's rate in records/s (0 when reused).
//
// With indexLater, the collection's vector index is dropped before the
// load and indexLater builds it afterwards (see bulkIndex); no rate is
// reported then.
func loadOrReuse(ctx context.Context, s mnemo.Store, cfg mnemo.CollectionConfig, recs []mnemo.Record, indexLater func(context.Context) error) (mnemo.Collection, float64, error) {
	const name = "sidebyside"
	c, err := s.CreateCollection(ctx, name, cfg)
	if err == nil {
		if n, err := c.Count(ctx); err != nil {
			return nil, 0, err
		} else if n == len(recs) {
			return c, 0, nil
		}
	}
	if err != nil && !errors.Is(err, mnemo.ErrCollectionExists) {
		return nil, 0, err
	}
	if err := s.DropCollection(ctx, name); err != nil {
		return nil, 0, err
	}
	if c, err = s.CreateCollection(ctx, name, cfg); err != nil {
		return nil, 0, err
	}
	if indexLater != nil {
		if err := bulkExec(ctx, keptDSN, `DO $$ BEGIN EXECUTE (SELECT 'DROP INDEX ' || quote_ident(i.indexname)
			FROM pg_indexes i JOIN mnemo_collections c ON i.tablename = 'mnemo_records_' || c.id
			WHERE c.name = 'sidebyside' AND i.schemaname = current_schema() AND i.indexdef LIKE '%USING hnsw%'); END $$`); err != nil {
			return nil, 0, err
		}
	}
	start := time.Now()
	for i := 0; i < len(recs); i += 100 {
		if _, err := c.Upsert(ctx, recs[i:min(i+100, len(recs))]...); err != nil {
			return nil, 0, err
		}
	}
	if indexLater != nil {
		return c, 0, indexLater(ctx)
	}
	return c, float64(len(recs)) / time.Since(start).Seconds(), nil
}

// bulkIndex builds the HNSW index of the store's collection "sidebyside"
// with cfg's parameters, as pgvector builds one over a loaded table (in
// memory, with maintenance_work_mem of 1 GB): MNEMO_PG_BENCH_BULK's way
// to a large collection in minutes, where inserting each record into the
// index as it is written takes hours. The queries then meet the same
// kind of graph; only the load differs, and no load rate is reported.
func bulkIndex(ctx context.Context, dsn string, cfg mnemo.CollectionConfig) error {
	return bulkExec(ctx, dsn, fmt.Sprintf(`DO $$ BEGIN
		SET LOCAL maintenance_work_mem = '1GB';
		EXECUTE (SELECT format('CREATE INDEX ON %%I USING hnsw (embedding vector_cosine_ops) WITH (m = %d, ef_construction = %d)', 'mnemo_records_' || id)
			FROM mnemo_collections WHERE name = 'sidebyside');
		END $$`, cfg.M, cfg.EfConstruction))
}

// bulkExec runs sql on a connection of its own to dsn.
func bulkExec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// keptDSN is the DSN of the kept PostgreSQL schema (sideBySideStores).
var keptDSN string

// appendBatches is how many batches of 100 BenchmarkSideBySide appends
// to the loaded collections to time writes.
const appendBatches = 10

// clients runs queries on c from n goroutines, each taking every n-th
// query in turn, until d has passed, and returns how many were answered.
func clients(ctx context.Context, c mnemo.Collection, queries []mnemo.Query, n int, d time.Duration) (int, error) {
	var done atomic.Int64
	errs := make(chan error, n)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := g; time.Now().Before(deadline); j += n {
				if _, err := c.Query(ctx, queries[j%len(queries)]); err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return int(done.Load()), <-errs
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / float64(time.Microsecond)
}

// sideBySide holds BenchmarkSideBySide's figures: the engine's, then
// PostgreSQL's, each in the order they were set.
type sideBySide [2]figures

type figures struct {
	names  []string
	values map[string]float64
}

func (f *figures) set(name string, v float64) {
	if f.values == nil {
		f.values = map[string]float64{}
	}
	if _, ok := f.values[name]; !ok {
		f.names = append(f.names, name)
	}
	f.values[name] = v
}

// report reports each figure of both backends, and their ratio when both
// have it, as metrics, and logs them as a table (latencies in
// milliseconds; "kept" for a load this run did not make).
func (r *sideBySide) report(b *testing.B, n int) {
	for i, backend := range []string{"engine", "postgres"} {
		for _, name := range r[i].names {
			b.ReportMetric(r[i].values[name], name+"-"+backend)
		}
	}
	for _, name := range r[0].names {
		if p, ok := r[1].values[name]; ok {
			b.ReportMetric(p/r[0].values[name], name+"-ratio")
		}
	}
	rows := []struct{ label, names string }{
		{"load, batches of 100 (records/s)", "batch-records/s"},
		{"append, batches of 100 (records/s)", "append-records/s"},
		{"single upsert p50 (ms)", "upsert-p50-us"},
		{"vector query p50 / p99 (ms)", "vector-p50-us vector-p99-us"},
		{"text query p50 / p99 (ms)", "text-p50-us text-p99-us"},
		{"hybrid query p50 / p99 (ms)", "hybrid-p50-us hybrid-p99-us"},
		{"hybrid, 8 clients (queries/s)", "hybrid-8clients-q/s"},
	}
	var tab strings.Builder
	w := tabwriter.NewWriter(&tab, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%d records\tengine\tpostgres\tpostgres/engine\t\n", n)
	for _, row := range rows {
		var cells [3][]string
		for _, name := range strings.Fields(row.names) {
			e, eok := r[0].values[name]
			p, pok := r[1].values[name]
			if strings.HasSuffix(name, "-us") {
				e, p = e/1000, p/1000
			}
			cells[0] = append(cells[0], cond(eok, num(e), "kept"))
			cells[1] = append(cells[1], cond(pok, num(p), "kept"))
			cells[2] = append(cells[2], cond(eok && pok, num(p/e)+"x", "-"))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t\n", row.label,
			strings.Join(cells[0], " / "), strings.Join(cells[1], " / "), strings.Join(cells[2], " / "))
	}
	w.Flush()
	b.Logf("side by side:\n%s", tab.String())
}

func cond(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// num formats v with three significant digits, or as an integer from 100.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
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
