// Package mnemotest is the conformance suite of mnemo.Store: every
// implementation runs it (the embedded engine in package engine's tests,
// PostgreSQL in package postgres's), and every behaviour the memory
// adapters rely on is checked here against the engine as the reference:
// the same records and queries go to an in-memory engine database, and
// the implementation must answer alike. Score spreading is the exception:
// it is checked against a statement of mnemo.Spread's spec written in
// this package (spread.go), which the engine must meet as well. It is
// the one package besides the adapters' Open forms that links both the
// data model and the engine, and only tests import it.
package mnemotest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// Factory returns an empty Store for one test. The suite closes it.
type Factory func(t *testing.T) mnemo.Store

// Run runs the conformance suite against the stores open returns.
func Run(t *testing.T, open Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, mnemo.Store)
	}{
		{"Collections", testCollections},
		{"RoundTrip", testRoundTrip},
		{"ScanAndCount", testScanAndCount},
		{"BadRecords", testBadRecords},
		{"BadQueries", testBadQueries},
		{"Filters", testFilters},
		{"SQLLookingValues", testSQLLookingValues},
		{"VectorQuery", testVectorQuery},
		{"TextQuery", testTextQuery},
		{"HybridQuery", testHybridQuery},
		{"Ties", testTies},
		{"Spread", testSpread},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Sequence", testSequence},
		{"Conditional", testConditional},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
}

// reference returns an in-memory engine database, closed with the test.
func reference(t *testing.T) mnemo.Store {
	t.Helper()
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db.Store()
}

func mustCreate(t *testing.T, s mnemo.Store, name string, cfg mnemo.CollectionConfig) mnemo.Collection {
	t.Helper()
	c, err := s.CreateCollection(context.Background(), name, cfg)
	if err != nil {
		t.Fatalf("CreateCollection(%q): %v", name, err)
	}
	return c
}

func mustUpsert(t *testing.T, c mnemo.Collection, recs ...mnemo.Record) []string {
	t.Helper()
	ids, err := c.Upsert(context.Background(), recs...)
	if err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	return ids
}

func testCollections(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	cfg := mnemo.CollectionConfig{Dimension: 4, Embedder: "test/v1/4"}
	a := mustCreate(t, s, "b-notes", cfg)
	if a.Name() != "b-notes" || a.Config().Dimension != 4 || a.Config().Metric != mnemo.Cosine || a.Config().Embedder != "test/v1/4" {
		t.Fatalf("collection %q with config %+v", a.Name(), a.Config())
	}
	if !a.Config().Equal(cfg) {
		t.Fatalf("Config %+v is not the config created %+v", a.Config(), cfg)
	}
	again, err := s.CreateCollection(ctx, "b-notes", cfg)
	if err != nil || again.Config().Embedder != "test/v1/4" {
		t.Fatalf("CreateCollection again with the same config: %v", err)
	}
	if _, err := s.CreateCollection(ctx, "b-notes", mnemo.CollectionConfig{Dimension: 4, Embedder: "other/v1/4"}); !errors.Is(err, mnemo.ErrCollectionExists) {
		t.Fatalf("CreateCollection with another embedder: %v, want ErrCollectionExists", err)
	}
	for _, name := range []string{"", strings.Repeat("x", 257), "a\x00b", "tab\there", "a\xffb", "\xc3("} {
		if _, err := s.CreateCollection(ctx, name, cfg); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("CreateCollection(%q): %v, want ErrInvalidConfig", name, err)
		}
		if _, err := s.Collection(ctx, name); !errors.Is(err, mnemo.ErrCollectionNotFound) {
			t.Errorf("Collection(%q): %v, want ErrCollectionNotFound", name, err)
		}
	}
	if _, err := s.CreateCollection(ctx, "zero", mnemo.CollectionConfig{}); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Errorf("CreateCollection with dimension 0: %v, want ErrInvalidConfig", err)
	}
	// Strings that JSON would store changed (invalid UTF-8 becomes
	// U+FFFD, so "\xfe" and "\xff" would be one embedder).
	for _, bad := range []mnemo.CollectionConfig{
		{Dimension: 2, Embedder: "hash\xff"},
		{Dimension: 2, Kind: "kind\xff"},
		{Dimension: 2, Text: mnemo.TextConfig{Fields: []string{"speaker\xff"}}},
	} {
		if _, err := s.CreateCollection(ctx, "bad-strings", bad); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("CreateCollection(%+v): %v, want ErrInvalidConfig", bad, err)
		}
	}
	mustCreate(t, s, "a-facts", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2})
	mustCreate(t, s, "Z \"quoted\"; DROP TABLE x", mnemo.CollectionConfig{Dimension: 2})
	names, err := s.Collections(ctx)
	if want := []string{"Z \"quoted\"; DROP TABLE x", "a-facts", "b-notes"}; err != nil || !slices.Equal(names, want) {
		t.Fatalf("Collections = %q, %v; want %q", names, err, want)
	}
	got, err := s.Collection(ctx, "a-facts")
	if err != nil || got.Config().Metric != mnemo.L2 {
		t.Fatalf("Collection(a-facts) = %v, %v", got, err)
	}
	if _, err := s.Collection(ctx, "missing"); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Collection(missing): %v, want ErrCollectionNotFound", err)
	}
	mustUpsert(t, got, mnemo.Record{ID: "x", Vector: []float32{1, 2}})
	if err := s.DropCollection(ctx, "a-facts"); err != nil {
		t.Fatal(err)
	}
	if err := s.DropCollection(ctx, "a-facts"); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("second DropCollection: %v, want ErrCollectionNotFound", err)
	}
	if _, _, err := got.Get(ctx, "x"); err == nil {
		t.Fatal("Get on a dropped collection succeeded")
	}
	re := mustCreate(t, s, "a-facts", mnemo.CollectionConfig{Dimension: 3})
	if n, err := re.Count(ctx); err != nil || n != 0 {
		t.Fatalf("recreated collection counts %d, %v; want 0", n, err)
	}
}

// sampleRecords are records with metadata of every kind filters meet.
func sampleRecords() []mnemo.Record {
	metas := []map[string]any{
		{"kind": "chat", "year": 2024.0, "score": 0.5, "ok": true, "tags": []any{"a", "b"}},
		{"kind": "web", "year": 2020.0, "score": -1.0, "ok": false, "nested": map[string]any{"x": 1.0}},
		{"kind": "chat", "year": "2024", "ok": nil},
		{"kind": "Chat", "year": 1999.0, "lang": "fr"},
		{"kind": "chat\"; DROP TABLE t; --", "year": 2024.5},
		{"year": 0.0, "kind": "", "lang": "en", "score": 1e300},
		{"kind": "épée", "lang": "ja", "score": 3.0},
		{"kind": "z", "ok": "true", "year": math.Copysign(0, -1)},
		nil,
		{"weird key ' \" ;": "value", "kind": "web"},
		{"kind": 5.0, "year": 2021.0},
		{"kind": []any{"chat"}, "year": 2030.0},
	}
	recs := make([]mnemo.Record, len(metas))
	r := rand.New(rand.NewPCG(7, 7))
	words := []string{"paul", "works", "at", "google", "the", "cat", "sat", "on", "mat", "running", "runs", "dogs", "bark", "tax", "rules", "東京都"}
	for i, m := range metas {
		v := make([]float32, 4)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		var sb strings.Builder
		for range 3 + r.IntN(6) {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		recs[i] = mnemo.Record{ID: fmt.Sprintf("r%02d", i), Vector: v, Content: sb.String(), Metadata: m}
	}
	return recs
}

func testRoundTrip(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "rt", mnemo.CollectionConfig{Dimension: 4})
	recs := sampleRecords()
	mustUpsert(t, c, recs...)
	ref := mustCreate(t, reference(t), "rt", mnemo.CollectionConfig{Dimension: 4})
	mustUpsert(t, ref, recs...)
	for _, r := range recs {
		got, ok, err := c.Get(ctx, r.ID)
		want, _, _ := ref.Get(ctx, r.ID)
		if err != nil || !ok {
			t.Fatalf("Get(%q) = %v, %v", r.ID, ok, err)
		}
		if !recordsEqual(got, want) {
			t.Errorf("Get(%q):\n got %+v\nwant %+v", r.ID, got, want)
		}
	}
	if _, ok, err := c.Get(ctx, "absent"); ok || err != nil {
		t.Fatalf("Get(absent) = %v, %v", ok, err)
	}
	ids := mustUpsert(t, c, mnemo.Record{Vector: []float32{1, 0, 0, 0}, Content: "assigned"})
	if len(ids) != 1 || len(ids[0]) != 36 {
		t.Fatalf("assigned ids %q, want one UUID", ids)
	}
	got, ok, err := c.Get(ctx, ids[0])
	if err != nil || !ok || got.Content != "assigned" {
		t.Fatalf("Get(assigned) = %+v, %v, %v", got, ok, err)
	}
	mustUpsert(t, c, mnemo.Record{ID: ids[0], Vector: []float32{0, 1, 0, 0}, Content: "replaced", Metadata: map[string]any{"v": 2}})
	got, _, _ = c.Get(ctx, ids[0])
	if got.Content != "replaced" || got.Metadata["v"] != 2.0 || got.Vector[1] != 1 {
		t.Fatalf("after replace: %+v", got)
	}
	n, err := c.Delete(ctx, ids[0], "absent", ids[0], "r00")
	if err != nil || n != 2 {
		t.Fatalf("Delete = %d, %v; want 2", n, err)
	}
	if n, err := c.Delete(ctx); err != nil || n != 0 {
		t.Fatalf("Delete() = %d, %v", n, err)
	}
	if _, ok, _ := c.Get(ctx, "r00"); ok {
		t.Fatal("r00 still there after Delete")
	}
	if n, err := c.Count(ctx); err != nil || n != len(recs)-1 {
		t.Fatalf("Count = %d, %v; want %d", n, err, len(recs)-1)
	}
}

func recordsEqual(a, b mnemo.Record) bool {
	return a.ID == b.ID && slices.Equal(a.Vector, b.Vector) && a.Content == b.Content &&
		valueEqual(a.Metadata, b.Metadata)
}

// valueEqual compares decoded metadata, numbers by value (PostgreSQL's
// jsonb keeps -0 as 0, which every filter treats alike).
func valueEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !valueEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, valueEqual)
	}
	return a == b
}

func testScanAndCount(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "scan", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.Dot})
	ids := []string{"b", "a", "B", "é", "a b", "a\tb", "z", "Z", "日本", "~", "0", "aa", "ab"}
	for _, id := range ids {
		mustUpsert(t, c, mnemo.Record{ID: id, Vector: []float32{1, 2}, Content: id})
	}
	want := slices.Clone(ids)
	slices.Sort(want) // byte order
	var got []string
	after := ""
	for {
		page, next, err := c.Scan(ctx, after, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			got = append(got, r.ID)
			if r.Content != r.ID || len(r.Vector) != 2 {
				t.Fatalf("scanned %+v", r)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Scan order %q, want %q", got, want)
	}
	page, next, err := c.Scan(ctx, "", len(ids))
	if err != nil || len(page) != len(ids) || next != "" {
		t.Fatalf("Scan of exactly all: %d records, next %q, %v", len(page), next, err)
	}
	// A limit past what any collection holds asks for everything.
	page, next, err = c.Scan(ctx, "", math.MaxInt)
	if err != nil || len(page) != len(ids) || next != "" {
		t.Fatalf("Scan with limit math.MaxInt: %d records, next %q, %v", len(page), next, err)
	}
	if _, _, err := c.Scan(ctx, "", 0); !errors.Is(err, mnemo.ErrBadQuery) {
		t.Fatalf("Scan limit 0: %v, want ErrBadQuery", err)
	}
	if n, err := c.Count(ctx); err != nil || n != len(ids) {
		t.Fatalf("Count = %d, %v", n, err)
	}
}

func testBadRecords(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "bad", mnemo.CollectionConfig{Dimension: 3})
	ref := mustCreate(t, reference(t), "bad", mnemo.CollectionConfig{Dimension: 3})
	deep := map[string]any{}
	m := deep
	for range mnemo.MaxMetadataDepth {
		n := map[string]any{}
		m["a"] = n
		m = n
	}
	good := mnemo.Record{ID: "good", Vector: []float32{1, 2, 3}}
	cases := []struct {
		name string
		rec  mnemo.Record
		want error
	}{
		{"dimension", mnemo.Record{ID: "x", Vector: []float32{1, 2}}, mnemo.ErrDimension},
		{"no vector", mnemo.Record{ID: "x"}, mnemo.ErrDimension},
		{"NaN", mnemo.Record{ID: "x", Vector: []float32{1, float32(math.NaN()), 0}}, mnemo.ErrNonFinite},
		{"Inf", mnemo.Record{ID: "x", Vector: []float32{1, float32(math.Inf(-1)), 0}}, mnemo.ErrNonFinite},
		{"zero under cosine", mnemo.Record{ID: "x", Vector: []float32{0, 0, 0}}, mnemo.ErrZeroVector},
		{"norm overflow", mnemo.Record{ID: "x", Vector: []float32{3e38, 3e38, 0}}, mnemo.ErrNormOverflow},
		{"long id", mnemo.Record{ID: strings.Repeat("i", mnemo.MaxIDLength+1), Vector: []float32{1, 2, 3}}, mnemo.ErrInvalidID},
		{"id not UTF-8", mnemo.Record{ID: "a\xffb", Vector: []float32{1, 2, 3}}, mnemo.ErrInvalidID},
		{"content not UTF-8", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Content: "\xc3("}, mnemo.ErrInvalidRecord},
		{"metadata NaN", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"n": math.NaN()}}, mnemo.ErrInvalidRecord},
		{"metadata too deep", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: deep}, mnemo.ErrInvalidRecord},
		{"metadata too large", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"s": strings.Repeat("x", mnemo.MaxMetadataBytes)}}, mnemo.ErrInvalidRecord},
		{"metadata key not UTF-8", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"\xff": 1}}, mnemo.ErrInvalidRecord},
		{"metadata nested key not UTF-8", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"m": map[string]any{"\xfe": 1}}}, mnemo.ErrInvalidRecord},
		{"metadata string not UTF-8", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"s": "a\xffb"}}, mnemo.ErrInvalidRecord},
		{"metadata list string not UTF-8", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"l": []any{"ok", "\xc3("}}}, mnemo.ErrInvalidRecord},
		{"id with NUL", mnemo.Record{ID: "a\x00b", Vector: []float32{1, 2, 3}}, mnemo.ErrInvalidRecord},
		{"metadata unencodable", mnemo.Record{ID: "x", Vector: []float32{1, 2, 3}, Metadata: map[string]any{"f": func() {}}}, mnemo.ErrInvalidRecord},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Upsert(ctx, good, tc.rec)
			_, refErr := ref.Upsert(ctx, good, tc.rec)
			if !errors.Is(err, tc.want) || !errors.Is(refErr, tc.want) {
				t.Fatalf("Upsert: %v (engine: %v), want %v", err, refErr, tc.want)
			}
			if n, _ := c.Count(ctx); n != 0 {
				t.Fatalf("a refused batch left %d records", n)
			}
		})
	}
	_, err := c.Upsert(ctx, good, good)
	if !errors.Is(err, mnemo.ErrInvalidRecord) {
		t.Fatalf("a batch with one id twice: %v, want ErrInvalidRecord", err)
	}
	if _, ok, err := c.Get(ctx, "a\x00b"); ok || err != nil {
		t.Errorf("Get of an id with NUL: %v, %v; want not found", ok, err)
	}
	if n, err := c.Delete(ctx, "a\x00b"); n != 0 || err != nil {
		t.Errorf("Delete of an id with NUL: %d, %v; want 0", n, err)
	}
	for _, id := range []string{"", strings.Repeat("i", mnemo.MaxIDLength+1), "\xff"} {
		if _, _, err := c.Get(ctx, id); !errors.Is(err, mnemo.ErrInvalidID) {
			t.Errorf("Get(%q): %v, want ErrInvalidID", id, err)
		}
		if _, err := c.Delete(ctx, "ok", id); !errors.Is(err, mnemo.ErrInvalidID) {
			t.Errorf("Delete(%q): %v, want ErrInvalidID", id, err)
		}
	}
	// A batch over MaxBatchBytes (each record under the content limit; one
	// string shared by all, so the test holds little memory).
	big := strings.Repeat("x", mnemo.MaxContentLength-1)
	var batch []mnemo.Record
	for i := range mnemo.MaxBatchBytes/len(big) + 2 {
		batch = append(batch, mnemo.Record{ID: fmt.Sprint("big", i), Vector: []float32{1, 2, 3}, Content: big})
	}
	if _, err := c.Upsert(ctx, batch...); !errors.Is(err, mnemo.ErrBatchTooLarge) {
		t.Errorf("a batch over MaxBatchBytes: %v, want ErrBatchTooLarge", err)
	}
	if _, ok, _ := c.Get(ctx, "big0"); ok {
		t.Error("a batch refused as too large stored its first record")
	}
	l2 := mustCreate(t, s, "bad-l2", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2})
	if _, err := l2.Upsert(ctx, mnemo.Record{ID: "zero", Vector: []float32{0, 0}}); err != nil {
		t.Fatalf("a zero vector under L2: %v", err)
	}
}

func testBadQueries(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "badq", mnemo.CollectionConfig{Dimension: 2})
	notext := mustCreate(t, s, "badq-notext", mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Disabled: true}})
	mustUpsert(t, c, mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "a"})
	nan := float32(math.NaN())
	cases := []struct {
		name string
		c    mnemo.Collection
		q    mnemo.Query
		want error
	}{
		{"dimension", c, mnemo.Query{Vector: []float32{1}}, mnemo.ErrDimension},
		{"zero", c, mnemo.Query{Vector: []float32{0, 0}}, mnemo.ErrZeroVector},
		{"no vector", c, mnemo.Query{}, mnemo.ErrDimension},
		{"k", c, mnemo.Query{Vector: []float32{1, 0}, K: -1}, mnemo.ErrBadQuery},
		{"ef", c, mnemo.Query{Vector: []float32{1, 0}, Ef: -1}, mnemo.ErrBadQuery},
		{"mode", c, mnemo.Query{Vector: []float32{1, 0}, Mode: "sql"}, mnemo.ErrBadQuery},
		{"NaN similarity", c, mnemo.Query{Vector: []float32{1, 0}, MinSimilarity: &nan}, mnemo.ErrBadQuery},
		{"similarity without vector", c, mnemo.Query{Text: "a", MinSimilarity: new(float32(0.5))}, mnemo.ErrBadQuery},
		{"fusion", c, mnemo.Query{Vector: []float32{1, 0}, Text: "a", Fusion: mnemo.Fusion{Method: "max"}}, mnemo.ErrBadQuery},
		{"weight", c, mnemo.Query{Vector: []float32{1, 0}, Text: "a", Fusion: mnemo.Fusion{VectorWeight: 1}}, mnemo.ErrBadQuery},
		{"bm25", c, mnemo.Query{Text: "a", BM25: &mnemo.BM25{K1: -1}}, mnemo.ErrBadQuery},
		{"text disabled", notext, mnemo.Query{Text: "a"}, mnemo.ErrBadQuery},
		{"neighbours of a vector query", c, mnemo.Query{Vector: []float32{1, 0}, Spread: &mnemo.Spread{Position: "p", Weight: 0.5}}, mnemo.ErrBadQuery},
		{"neighbour weight", c, mnemo.Query{Text: "a", Spread: &mnemo.Spread{Position: "p", Weight: 2}}, mnemo.ErrBadQuery},
		{"neighbour position", c, mnemo.Query{Text: "a", Spread: &mnemo.Spread{Weight: 0.5}}, mnemo.ErrBadQuery},
	}
	for _, tc := range cases {
		if _, err := tc.c.Query(ctx, tc.q); !errors.Is(err, tc.want) {
			t.Errorf("%s: Query: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// filterCases are filters over sampleRecords, from the engine's language:
// every operator, type mismatches, absent fields, lists and objects.
var filterCases = []string{
	`{"kind": "chat"}`,
	`{"kind": {"$eq": "chat"}}`,
	`{"kind": {"$ne": "chat"}}`,
	`{"year": 2024}`,
	`{"year": 2024.0}`,
	`{"year": "2024"}`,
	`{"year": {"$gt": 2020}}`,
	`{"year": {"$gte": 2020}}`,
	`{"year": {"$lt": 2020}}`,
	`{"year": {"$lte": 0}}`,
	`{"year": {"$gte": "2000"}}`,
	`{"kind": {"$gt": "chat"}}`,
	`{"kind": {"$lt": "d"}}`,
	`{"kind": {"$gte": ""}}`,
	`{"kind": {"$in": ["chat", "web", 5]}}`,
	`{"kind": {"$nin": ["chat", "web"]}}`,
	`{"kind": {"$in": []}}`,
	`{"kind": {"$nin": []}}`,
	`{"ok": true}`,
	`{"ok": false}`,
	`{"ok": null}`,
	`{"ok": {"$ne": null}}`,
	`{"ok": {"$in": [true, null]}}`,
	`{"ok": "true"}`,
	`{"lang": {"$exists": true}}`,
	`{"lang": {"$exists": false}}`,
	`{"ok": {"$exists": true}}`,
	`{"tags": "a"}`,
	`{"tags": {"$ne": "a"}}`,
	`{"nested": {"$exists": true}}`,
	`{"nested": {"$ne": 1}}`,
	`{"score": {"$gt": 0.4}}`,
	`{"score": {"$lte": 1e300}}`,
	`{"score": 1e300}`,
	`{"year": -0.0}`,
	`{"year": 0}`,
	`{"kind": "épée"}`,
	`{"kind": {"$gt": "z"}}`,
	`{"weird key ' \" ;": "value"}`,
	`{"kind": "chat\"; DROP TABLE t; --"}`,
	`{"kind": "chat", "year": 2024}`,
	`{"$or": [{"kind": "web"}, {"lang": "fr"}]}`,
	`{"$and": [{"kind": {"$ne": "web"}}, {"$or": [{"year": {"$gt": 2023}}, {"lang": {"$exists": true}}]}]}`,
	`{"$or": [{"missing": {"$exists": false}}, {"kind": "none"}]}`,
	`{"missing": {"$ne": "x"}}`,
	`{"missing": {"$nin": ["x"]}}`,
	`{"missing": {"$lt": 5}}`,
}

// matching returns the IDs of recs that f admits, sorted: the engine's
// evaluator is the reference.
func matching(f *mnemo.Filter, recs []mnemo.Record) []string {
	var ids []string
	for _, r := range recs {
		meta := r.Metadata
		if meta != nil { // as stored: numbers as float64
			meta = roundTrip(meta)
		}
		if f.Match(meta) {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func testFilters(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "filters", mnemo.CollectionConfig{Dimension: 4})
	recs := sampleRecords()
	mustUpsert(t, c, recs...)
	for _, text := range filterCases {
		f, err := mnemo.ParseFilter(text)
		if err != nil {
			t.Fatalf("ParseFilter(%s): %v", text, err)
		}
		want := matching(f, recs)
		for _, exact := range []bool{true, false} {
			hits, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 1, 1, 1}, K: len(recs) + 5, Filter: f, Exact: exact})
			if err != nil {
				t.Fatalf("%s: %v", text, err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.Record.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("filter %s (exact %v): got %q, want %q", text, exact, got, want)
			}
		}
		hits, err := c.Query(ctx, mnemo.Query{Text: "paul cat tax dogs the at on mat rules works google sat running bark 東京", K: 100, Filter: f})
		if err != nil {
			t.Fatalf("%s: text: %v", text, err)
		}
		for _, h := range hits {
			if !slices.Contains(want, h.Record.ID) {
				t.Errorf("filter %s: a text query returned %q", text, h.Record.ID)
			}
		}
	}
	for _, text := range []string{`{"a": {"$regex": "x"}}`, `{"$not": {}}`, `{"a": {"$gt": true}}`, `{"a": {"$in": 3}}`, `[]`, `{"a": [1]}`, `{"": 1}`, `{"a": {"$exists": 1}}`} {
		if _, err := mnemo.ParseFilter(text); !errors.Is(err, mnemo.ErrBadFilter) {
			t.Errorf("ParseFilter(%s): %v, want ErrBadFilter", text, err)
		}
	}
}

func testSQLLookingValues(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	evil := []string{`'); DROP TABLE mnemo_collections; --`, `" OR 1=1 --`, `a'b`, `\`, `$1`, `%`, `_`, `;`, `?`, `-- x`, `/* x */`, `\x00`, `E'\\'`, `$$`, `::jsonb`, `' OR ''='`}
	c := mustCreate(t, s, `evil'); DROP TABLE mnemo_collections; --`, mnemo.CollectionConfig{Dimension: 2})
	for i, v := range evil {
		mustUpsert(t, c, mnemo.Record{ID: v, Vector: []float32{1, float32(i)}, Content: v + " marker", Metadata: map[string]any{"v": v, v: "key"}})
	}
	for _, v := range evil {
		rec, ok, err := c.Get(ctx, v)
		if err != nil || !ok || rec.Content != v+" marker" || rec.Metadata["v"] != v || rec.Metadata[v] != "key" {
			t.Fatalf("Get(%q) = %+v, %v, %v", v, rec, ok, err)
		}
		for _, q := range []map[string]any{{"v": v}, {v: "key"}, {"v": map[string]any{"$in": []any{v}}}, {"v": map[string]any{"$gte": v, "$lte": v}}} {
			if _, ok := q["v"].(map[string]any); ok && len(q["v"].(map[string]any)) == 2 {
				q = map[string]any{"$and": []any{map[string]any{"v": map[string]any{"$gte": v}}, map[string]any{"v": map[string]any{"$lte": v}}}}
			}
			if _, ok := q[v]; ok && strings.HasPrefix(v, "$") {
				continue // a field name cannot start with $
			}
			f, err := mnemo.NewFilter(q)
			if err != nil {
				t.Fatal(err)
			}
			hits, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 1}, K: 100, Filter: f})
			if err != nil || len(hits) != 1 || hits[0].Record.ID != v {
				t.Fatalf("filter %v: %d hits, %v; want %q alone", q, len(hits), err, v)
			}
		}
	}
	n, err := c.Count(ctx)
	if err != nil || n != len(evil) {
		t.Fatalf("Count = %d, %v", n, err)
	}
	if names, err := s.Collections(ctx); err != nil || len(names) != 1 {
		t.Fatalf("Collections = %q, %v", names, err)
	}
	if n, err := c.Delete(ctx, evil...); err != nil || n != len(evil) {
		t.Fatalf("Delete = %d, %v", n, err)
	}
}
