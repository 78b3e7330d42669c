package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/postgres"
)

// zipfText returns a text of n words drawn from a vocabulary of vocab
// words with Zipf-like frequencies, so that some terms are in most
// records and most terms in few: the lists a text query prunes.
func zipfText(r *rand.Rand, z *rand.Zipf, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", z.Uint64())
	}
	return strings.Join(words, " ")
}

// textIndexID returns the table number of collection name.
func textIndexID(t *testing.T, conn *pgx.Conn, name string) int64 {
	t.Helper()
	var id int64
	if err := conn.QueryRow(context.Background(), `SELECT id FROM mnemo_collections WHERE name = $1`, name).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkTextIndex fails t unless collection name's postings, document
// frequencies and statistics are exactly what its records' terms make.
func checkTextIndex(t *testing.T, conn *pgx.Conn, name string) {
	t.Helper()
	id := textIndexID(t, conn, name)
	r, p := fmt.Sprintf("mnemo_records_%d", id), fmt.Sprintf("mnemo_postings_%d", id)
	d, s := fmt.Sprintf("mnemo_terms_%d", id), fmt.Sprintf("mnemo_textstats_%d", id)
	checks := []struct{ what, sql string }{
		{"postings that no record holds, or records' terms without postings", `SELECT count(*) FROM (
			(SELECT u.term, t.id, u.tf, t.text_len FROM ` + r + ` t CROSS JOIN LATERAL unnest(t.terms, t.freqs) AS u(term, tf)
			 EXCEPT ALL SELECT term, id, tf, len FROM ` + p + `)
			UNION ALL
			(SELECT term, id, tf, len FROM ` + p + `
			 EXCEPT ALL SELECT u.term, t.id, u.tf, t.text_len FROM ` + r + ` t CROSS JOIN LATERAL unnest(t.terms, t.freqs) AS u(term, tf))) x`},
		{"terms whose frequency is not their postings' count", `SELECT count(*) FROM (
			SELECT term, sum(df) AS df FROM ` + d + ` GROUP BY term HAVING sum(df) <> 0) f
			FULL JOIN (SELECT term, count(*) AS df FROM ` + p + ` GROUP BY term) c USING (term)
			WHERE f.df IS DISTINCT FROM c.df`},
		{"terms whose bounds are below a posting's", `SELECT count(*) FROM (SELECT term, max(tf) AS tf, min(len) AS len FROM ` + p + ` GROUP BY term) c
			JOIN (SELECT term, max(max_tf) AS tf, min(min_len) AS len FROM ` + d + ` GROUP BY term) f USING (term)
			WHERE f.tf < c.tf OR f.len > c.len`},
		{"statistics that are not the records'", `SELECT count(*) FROM
			(SELECT coalesce(sum(n), 0) AS n, coalesce(sum(total), 0) AS total FROM ` + s + `) a,
			(SELECT count(*) FILTER (WHERE text_len > 0) AS n, coalesce(sum(text_len), 0) AS total FROM ` + r + `) b
			WHERE a.n <> b.n OR a.total <> b.total`},
	}
	for _, c := range checks {
		var n int64
		if err := conn.QueryRow(context.Background(), c.sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if n != 0 {
			t.Errorf("%s: %d", c.what, n)
		}
	}
}

// sameHits fails t unless got (PostgreSQL) has want's (the engine's)
// records in want's order, with scores within 1e-6.
func sameHits(t *testing.T, what string, got, want []mnemo.Hit) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].Record.ID == want[i].Record.ID && math.Abs(got[i].Score-want[i].Score) <= 1e-6
	}
	if !ok {
		t.Errorf("%s:\n postgres %v\n engine   %v", what, hitList(got), hitList(want))
	}
}

func hitList(hits []mnemo.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s:%.9f", h.Record.ID, h.Score)
	}
	return out
}

// TestTextPruning: on a corpus whose common terms are in most records,
// the server's pruned BM25 ranking returns the engine's records, order
// and scores, for queries mixing common and rare terms, at several K,
// with and without filters and BM25 parameters, before and after updates
// and deletes; and the full-text tables stay exactly what the records
// make.
func TestTextPruning(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	pg, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	db, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat}
	var cols []mnemo.Collection
	for _, s := range []mnemo.Store{pg, db.Store()} {
		c, err := s.CreateCollection(ctx, "zipf", cfg)
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 2, 3000)
	const n = 2000
	write := func(recs []mnemo.Record) {
		for _, c := range cols {
			if _, err := c.Upsert(ctx, recs...); err != nil {
				t.Fatal(err)
			}
		}
	}
	record := func(i int) mnemo.Record {
		return mnemo.Record{ID: fmt.Sprintf("r%05d", i), Vector: []float32{1, float32(i%7) + 1},
			Content: zipfText(r, z, 3+r.IntN(30)), Metadata: map[string]any{"g": float64(i % 5)}}
	}
	for i := 0; i < n; i += 100 {
		var batch []mnemo.Record
		for j := i; j < i+100; j++ {
			batch = append(batch, record(j))
		}
		write(batch)
	}
	conn := connect(t, dsn)
	compare := func(round string) {
		t.Helper()
		checkTextIndex(t, conn, "zipf")
		qr := rand.New(rand.NewPCG(3, 4))
		filter, err := mnemo.ParseFilter(`{"g": {"$in": [1, 3]}}`)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			q := mnemo.Query{Mode: mnemo.ModeText, Text: zipfText(qr, rand.NewZipf(qr, 1.05, 1, 3000), 1+qr.IntN(6)), K: []int{1, 5, 10, 50}[i%4]}
			if i%3 == 1 {
				q.Filter = filter
			}
			if i%7 == 2 {
				q.BM25 = &mnemo.BM25{K1: 0.5, B: 0.3}
			}
			var res [2][]mnemo.Hit
			for j, c := range cols {
				if res[j], err = c.Query(ctx, q); err != nil {
					t.Fatalf("%s: %q: %v", round, q.Text, err)
				}
			}
			sameHits(t, fmt.Sprintf("%s: %q k %d filter %v bm25 %v", round, q.Text, q.K, q.Filter != nil, q.BM25), res[0], res[1])
		}
	}
	compare("loaded")
	// Rewrite a third, some to no text at all, and delete a tenth.
	var batch []mnemo.Record
	for i := 0; i < n; i += 3 {
		rec := record(i)
		if i%9 == 0 {
			rec.Content = "!"
		}
		batch = append(batch, rec)
	}
	write(batch)
	var del []string
	for i := 1; i < n; i += 10 {
		del = append(del, fmt.Sprintf("r%05d", i))
	}
	for _, c := range cols {
		if _, err := c.Delete(ctx, del...); err != nil {
			t.Fatal(err)
		}
	}
	compare("rewritten")
}

// TestTextConcurrentWriters: writers on several connections upserting and
// deleting overlapping records leave the full-text tables exactly what
// the records make: no write is counted twice or lost, and none
// deadlocks.
func TestTextConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	pg, err := postgres.Open(ctx, dsn, &postgres.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	c, err := pg.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			z := rand.NewZipf(r, 1.2, 1, 200)
			for range 30 {
				var batch []mnemo.Record
				for range 1 + r.IntN(20) {
					batch = append(batch, mnemo.Record{ID: fmt.Sprintf("r%03d", r.IntN(120)), Vector: []float32{1, 2}, Content: zipfText(r, z, 1+r.IntN(12))})
				}
				slicesCompactByID(&batch)
				if r.IntN(4) == 0 {
					if _, err := c.Delete(ctx, batch[0].ID, batch[len(batch)-1].ID); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if _, err := c.Upsert(ctx, batch...); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkTextIndex(t, connect(t, dsn), "c")
}

// slicesCompactByID keeps the first record of each ID.
func slicesCompactByID(recs *[]mnemo.Record) {
	seen := map[string]bool{}
	out := (*recs)[:0]
	for _, r := range *recs {
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	*recs = out
}

// TestMigrateText: a schema of version 1 (a GIN index over each record's
// terms) opens as the current version, with its full-text tables built
// from the records, and ranks text as a collection created now does.
func TestMigrateText(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	conn := connect(t, dsn)
	cfg := mnemo.CollectionConfig{Dimension: 2}.WithDefaults()
	texts := []string{"the quick brown fox", "a lazy dog sleeps", "quick quick fox jumps over the dog", "", "brown dogs and brown foxes"}
	setup := []string{
		`CREATE TABLE mnemo_schema (version integer NOT NULL)`,
		`INSERT INTO mnemo_schema VALUES (1)`,
		`CREATE TABLE mnemo_collections (id bigserial PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE, config jsonb NOT NULL, created timestamptz NOT NULL DEFAULT now())`,
		fmt.Sprintf(`INSERT INTO mnemo_collections (name, config) VALUES ('old', '%s')`, mustJSON(t, cfg)),
		`CREATE TABLE mnemo_records_1 (id text COLLATE "C" PRIMARY KEY, embedding vector(2) NOT NULL, content text NOT NULL, metadata jsonb,
			terms text[] NOT NULL, freqs int4[] NOT NULL, text_len int4 NOT NULL)`,
		`CREATE INDEX ON mnemo_records_1 USING gin (terms)`,
		`CREATE INDEX ON mnemo_records_1 USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200)`,
	}
	for _, stmt := range setup {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ec, err := db.Store().CreateCollection(ctx, "old", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		terms, freqs, length := mnemo.TextTerms(cfg, text, nil)
		if terms == nil {
			terms, freqs = []string{}, []int{}
		}
		if _, err := conn.Exec(ctx, `INSERT INTO mnemo_records_1 VALUES ($1, '[1,2]', $2, NULL, $3, $4, $5)`, fmt.Sprint(i), text, terms, freqs, length); err != nil {
			t.Fatal(err)
		}
		if _, err := ec.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(i), Vector: []float32{1, 2}, Content: text}); err != nil {
			t.Fatal(err)
		}
	}
	pg, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if got := schemaRows(t, conn); got != fmt.Sprint([]int{postgres.SchemaVersion}) {
		t.Fatalf("mnemo_schema after Open: %s", got)
	}
	var gin bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'mnemo_records_1' AND indexdef LIKE '%USING gin%')`).Scan(&gin); err != nil {
		t.Fatal(err)
	}
	if gin {
		t.Error("the GIN index of version 1 is still there")
	}
	checkTextIndex(t, conn, "old")
	pc, err := pg.Collection(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"quick fox", "brown dog", "the", "jumps over lazy"} {
		got, err := pc.Query(ctx, mnemo.Query{Mode: mnemo.ModeText, Text: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ec.Query(ctx, mnemo.Query{Mode: mnemo.ModeText, Text: q, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, q, got, want)
	}
	// And it goes on as a collection of today: a write keeps the index.
	if _, err := pc.Upsert(ctx, mnemo.Record{ID: "1", Vector: []float32{1, 2}, Content: "a quick dog"}); err != nil {
		t.Fatal(err)
	}
	checkTextIndex(t, conn, "old")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
