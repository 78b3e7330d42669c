package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/postgres"
)

// TestProbeMigrateMany: a version-1 schema with several collections (one
// empty, one of thousands of records, one with text fields, one with text
// disabled, a gap in the ids) opened by three goroutines at once; then text
// queries match the engine and the tables match the records.
func TestProbeMigrateMany(t *testing.T) {
	serverDSN(t)
	ctx := context.Background()
	dsn := freshDSN(t)
	conn := connect(t, dsn)
	must := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	must(`CREATE TABLE mnemo_schema (version integer NOT NULL)`)
	must(`INSERT INTO mnemo_schema VALUES (1)`)
	must(`CREATE TABLE mnemo_collections (id bigserial PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE, config jsonb NOT NULL, created timestamptz NOT NULL DEFAULT now())`)
	type coll struct {
		name string
		id   int
		cfg  mnemo.CollectionConfig
		n    int
	}
	colls := []coll{
		{"empty", 1, mnemo.CollectionConfig{Dimension: 2}, 0},
		{"big", 2, mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat}, 3000},
		{"meta", 4, mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Fields: []string{"title"}, BM25: &mnemo.BM25{K1: 2, B: 0.5}}}, 300},
		{"off", 5, mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Disabled: true}}, 50},
		{"it's \"odd\"", 6, mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat}, 40},
	}
	db, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.1, 2, 1500)
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%d", z.Uint64())
		}
		return strings.Join(ws, " ")
	}
	engs := map[string]mnemo.Collection{}
	for _, c := range colls {
		cfg := c.cfg.WithDefaults()
		js, _ := json.Marshal(cfg)
		must(`INSERT INTO mnemo_collections (id, name, config) VALUES ($1, $2, $3::text::jsonb)`, c.id, c.name, string(js))
		tbl := fmt.Sprintf("mnemo_records_%d", c.id)
		must(`CREATE TABLE ` + tbl + ` (id text COLLATE "C" PRIMARY KEY, embedding vector(2) NOT NULL, content text NOT NULL, metadata jsonb,
			terms text[] NOT NULL, freqs int4[] NOT NULL, text_len int4 NOT NULL)`)
		must(`CREATE INDEX ON ` + tbl + ` USING gin (terms)`)
		if cfg.Index == mnemo.HNSW {
			must(`CREATE INDEX ON ` + tbl + ` USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200)`)
		}
		ec, err := db.Store().CreateCollection(ctx, c.name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		engs[c.name] = ec
		var recs []mnemo.Record
		var b pgx.Batch
		for i := range c.n {
			rec := mnemo.Record{ID: fmt.Sprintf("r%05d", i), Vector: []float32{1, float32(i % 5)}, Content: text(r.IntN(25))}
			if i%4 == 0 {
				rec.Metadata = map[string]any{"title": text(1 + r.IntN(3)), "g": float64(i % 3)}
			}
			if i%97 == 0 {
				rec.Content = rep("w2", 1000)
			}
			var meta *string
			if rec.Metadata != nil {
				js, _ := json.Marshal(rec.Metadata)
				s := string(js)
				meta = &s
			}
			var stored map[string]any
			if meta != nil {
				json.Unmarshal([]byte(*meta), &stored)
			}
			terms, freqs, length := mnemo.TextTerms(cfg, rec.Content, stored)
			if terms == nil {
				terms, freqs = []string{}, []int{}
			}
			b.Queue(`INSERT INTO `+tbl+` VALUES ($1, '[1,2]', $2, $3::text::jsonb, $4, $5, $6)`, rec.ID, rec.Content, meta, terms, freqs, length)
			rec.Vector = []float32{1, 2}
			recs = append(recs, rec)
		}
		if b.Len() > 0 {
			if err := conn.SendBatch(ctx, &b).Close(); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(recs); i += 500 {
			if _, err := ec.Upsert(ctx, recs[i:min(i+500, len(recs))]...); err != nil {
				t.Fatal(err)
			}
		}
	}
	must(`SELECT setval('mnemo_collections_id_seq', 6)`)
	var wg sync.WaitGroup
	stores := make([]*postgres.Store, 3)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(ctx, dsn, nil)
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
				return
			}
			stores[i] = s
		}()
	}
	wg.Wait()
	for _, s := range stores {
		if s != nil {
			defer s.Close()
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if got := schemaRows(t, conn); got != fmt.Sprint([]int{postgres.SchemaVersion}) {
		t.Fatalf("mnemo_schema after Open: %s", got)
	}
	for _, c := range colls {
		checkTextIndex(t, conn, c.name)
		pc, err := stores[1].Collection(ctx, c.name)
		if err != nil {
			t.Fatal(err)
		}
		p := &probePair{pg: pc, eng: engs[c.name]}
		f, _ := mnemo.ParseFilter(`{"g": 1}`)
		for i := range 40 {
			q := mnemo.Query{Mode: mnemo.ModeText, Text: text(1 + i%6), K: []int{1, 10, 1000}[i%3]}
			if i%4 == 1 {
				q.Filter = f
			}
			if c.cfg.Text.Disabled {
				_, e1 := pc.Query(ctx, q)
				_, e2 := p.eng.Query(ctx, q)
				if (e1 == nil) != (e2 == nil) {
					t.Errorf("%s: text query on a disabled index: postgres %v, engine %v", c.name, e1, e2)
				}
				continue
			}
			p.compare(t, fmt.Sprintf("%s %q k %d", c.name, q.Text, q.K), q)
		}
		// and a write after the migration keeps the tables right
		if _, err := pc.Upsert(ctx, mnemo.Record{ID: "r00001", Vector: []float32{1, 2}, Content: "w2 w3 fresh"}); err != nil {
			t.Fatal(err)
		}
		if _, err := pc.Delete(ctx, "r00002"); err != nil {
			t.Fatal(err)
		}
		checkTextIndex(t, conn, c.name)
	}
	// a new collection after migration gets an id past the old ones
	if _, err := stores[0].CreateCollection(ctx, "new", mnemo.CollectionConfig{Dimension: 2}); err != nil {
		t.Fatal(err)
	}
}
