package vectorstore

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

var ctx = context.Background()

var corpus = []Doc{
	{ID: "paul-work", Text: "Paul works at Google as an engineer", Metadata: map[string]any{"source": "chat", "year": 2026}},
	{ID: "anna-work", Text: "Anna works at a bakery in Lyon", Metadata: map[string]any{"source": "chat", "year": 2024}},
	{ID: "weather", Text: "The weather in Paris is rainy today", Metadata: map[string]any{"source": "web", "year": 2026}},
	{ID: "paul-hike", Text: "Paul likes hiking in the Alps", Metadata: map[string]any{"source": "web", "year": 2020}},
}

// newStore returns a Store in db with opts, failing the test on an error.
func newStore(t *testing.T, db mnemo.Store, opts *Options) *Store {
	t.Helper()
	s, err := New(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func add(t *testing.T, s *Store, docs []Doc) []string {
	t.Helper()
	ids, err := s.Add(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(docs) {
		t.Fatalf("Add returned %d ids for %d documents", len(ids), len(docs))
	}
	return ids
}

func search(t *testing.T, s *Store, q Search) []string {
	t.Helper()
	hits, err := s.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	return idsOf(hits)
}

func idsOf(hits []mnemo.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Record.ID
	}
	return out
}

func count(t *testing.T, s *Store) int {
	t.Helper()
	n, err := s.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAddAndSearch(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		if ids := add(t, s, corpus); ids[0] != "paul-work" {
			t.Fatalf("ids %q", ids)
		}
		hits, err := s.Search(ctx, Search{Text: "where does Paul work?", K: 2})
		if err != nil || len(hits) != 2 || hits[0].Record.ID != "paul-work" || hits[0].Record.Content != corpus[0].Text {
			t.Fatalf("Search = %q, %v", idsOf(hits), err)
		}
		if s0, s1 := hits[0].Similarity, hits[1].Similarity; s0 <= s1 || s0 > 1 || s1 <= 0 {
			t.Fatalf("similarities %v, %v: want descending in (0, 1]", s0, s1)
		}
		if m := hits[0].Record.Metadata; m["source"] != "chat" || m["year"] != float64(2026) {
			t.Fatalf("metadata %v", m)
		}
		// A document without an ID gets one; one under a stored ID
		// replaces it.
		ids := add(t, s, []Doc{{Text: "no id here"}, {ID: "weather", Text: "Sunny in Paris"}})
		if ids[0] == "" || ids[1] != "weather" || count(t, s) != 5 {
			t.Fatalf("ids %q, %d documents", ids, count(t, s))
		}
		if got := search(t, s, Search{Text: "sunny", K: 1, Mode: mnemo.ModeText}); !slices.Equal(got, []string{"weather"}) {
			t.Fatalf("after replacing: %q", got)
		}
		if ids, err := s.Add(ctx, nil); ids != nil || err != nil {
			t.Fatalf("Add(nil) = %q, %v", ids, err)
		}
	})
}

// TestScoreIsCosineSimilarity: a hit's similarity is the cosine
// similarity of the query's and the document's embeddings, in every mode.
func TestScoreIsCosineSimilarity(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus[:1])
		vs, _ := s.Embedder().Embed(ctx, []string{corpus[0].Text, "Paul engineer"})
		var dot float32
		for i := range vs[0] {
			dot += vs[0][i] * vs[1][i]
		}
		for _, mode := range []mnemo.Mode{"", mnemo.ModeHybrid, mnemo.ModeVector, mnemo.ModeText} {
			hits, err := s.Search(ctx, Search{Text: "Paul engineer", K: 1, Mode: mode})
			if err != nil || len(hits) != 1 || math.Abs(float64(hits[0].Similarity-dot)) > 1e-5 {
				t.Fatalf("mode %q: %v, %v; want the cosine similarity %v", mode, hits, err, dot)
			}
		}
	})
}

func TestSearch(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus)
		all, err := s.Search(ctx, Search{Text: "Paul works at Google", K: 4})
		if err != nil || len(all) != 4 {
			t.Fatalf("%d hits, %v", len(all), err)
		}
		cut := float64(all[1].Similarity) // a hit exactly at the minimum is kept
		chat, _ := FilterOf(map[string]any{"source": "chat"})
		old, _ := FilterOf(`{"year": {"$lt": 2025}}`)
		tests := []struct {
			name string
			q    Search
			want []string // sorted
		}{
			{"k", Search{Text: "Paul works at Google", K: 2}, sorted(idsOf(all[:2]))},
			{"minimum score", Search{Text: "Paul works at Google", K: 4, MinScore: &cut}, sorted(idsOf(all[:2]))},
			{"filter", Search{Text: "Paul hiking", K: 4, Filter: chat}, []string{"anna-work", "paul-work"}},
			{"operator filter", Search{Text: "Paul hiking", K: 4, Filter: old}, []string{"anna-work", "paul-hike"}},
			{"hybrid", Search{Text: "bakery", K: 4, Mode: mnemo.ModeHybrid}, sorted(idsOf(all))},
			{"vector", Search{Text: "bakery", K: 4, Mode: mnemo.ModeVector}, sorted(idsOf(all))},
			{"text: only documents holding a query word", Search{Text: "bakery", K: 4, Mode: mnemo.ModeText}, []string{"anna-work"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got := sorted(search(t, s, tt.q)); !slices.Equal(got, tt.want) {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			})
		}
		text := newStore(t, db, &Options{Mode: mnemo.ModeText})
		if got := search(t, text, Search{Text: "bakery", K: 4}); !slices.Equal(got, []string{"anna-work"}) {
			t.Fatalf("Options.Mode text: %q", got)
		}
		if got := search(t, text, Search{Text: "bakery", K: 4, Mode: mnemo.ModeVector}); len(got) != 4 {
			t.Fatalf("Search.Mode over Options.Mode: %q", got)
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// embedder is an embedder that returns what it is told, after the
// texts' hashing vectors.
type embedder struct {
	h     *embed.Hashing
	calls atomic.Int32
	fix   func([][]float32) [][]float32 // changes the vectors returned
}

func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	vs, err := e.h.Embed(ctx, texts)
	if err != nil || e.fix == nil {
		return vs, err
	}
	return e.fix(vs), nil
}
func (e *embedder) Dimension() int   { return e.h.Dimension() }
func (e *embedder) Identity() string { return e.h.Identity() }

func TestBadInput(t *testing.T) {
	h, _ := embed.NewHashing(16)
	tests := []struct {
		name string
		emb  embed.Embedder
		docs []Doc
		q    Search
		want error
	}{
		{"empty text", nil, []Doc{{Text: " \n"}}, Search{Text: "", K: 1}, ErrEmpty},
		{"invalid UTF-8", nil, []Doc{{Text: "a\xff"}}, Search{Text: "a\xff", K: 1}, ErrInvalid},
		{"zero vector", vectorstoretest.Zero{}, []Doc{{Text: "Paul"}}, Search{Text: "Paul", K: 1}, ErrEmpty},
		{"too few vectors", &embedder{h: h, fix: func(vs [][]float32) [][]float32 { return vs[:0] }}, corpus[:1], Search{Text: "Paul", K: 1}, ErrEmbedding},
		{"wrong dimension", &embedder{h: h, fix: func(vs [][]float32) [][]float32 { vs[0] = vs[0][:3]; return vs }}, corpus[:1], Search{Text: "Paul", K: 1}, ErrEmbedding},
		{"NaN", &embedder{h: h, fix: func(vs [][]float32) [][]float32 { vs[0][2] = float32(math.NaN()); return vs }}, corpus[:1], Search{Text: "Paul", K: 1}, mnemo.ErrNonFinite},
		{"k 0", nil, nil, Search{Text: "Paul"}, ErrInvalid},
		{"minimum score 1.5", nil, nil, Search{Text: "Paul", K: 1, MinScore: new(1.5)}, ErrInvalid},
		{"minimum score NaN", nil, nil, Search{Text: "Paul", K: 1, MinScore: new(math.NaN())}, ErrInvalid},
	}
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s := newStore(t, db, &Options{Collection: "bad", Embedder: tt.emb})
				if tt.docs != nil {
					if _, err := s.Add(ctx, tt.docs); !errors.Is(err, tt.want) {
						t.Fatalf("Add: %v, want %v", err, tt.want)
					}
				}
				if _, err := s.Search(ctx, tt.q); !errors.Is(err, tt.want) {
					t.Fatalf("Search: %v, want %v", err, tt.want)
				}
				if names, _ := db.Collections(ctx); len(names) != 0 {
					t.Fatalf("a refused call made collections %q", names)
				}
			})
		}
	})
	if _, err := New(ctx, nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil database: %v", err)
	}
	if err := (&Options{BatchSize: -1}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative batch size: %v", err)
	}
	if _, err := Open("", &Options{BatchSize: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Open with a negative batch size: %v", err)
	}
}

func TestBatches(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		h, _ := embed.NewHashing(0)
		for _, tt := range []struct{ batch, docs, calls int }{{0, 4, 1}, {2, 4, 2}, {3, 4, 2}, {1, 4, 4}} {
			e := &embedder{h: h}
			s := newStore(t, db, &Options{Embedder: e, BatchSize: tt.batch})
			add(t, s, corpus[:tt.docs])
			if got := int(e.calls.Load()); got != tt.calls {
				t.Errorf("batch size %d: %d Embed calls for %d documents, want %d", tt.batch, got, tt.docs, tt.calls)
			}
		}
		// Batches are embedded in order, each checked.
		s := newStore(t, db, &Options{Collection: "batches", BatchSize: 2})
		docs := append(slices.Clone(corpus), Doc{Text: "?"}, Doc{Text: "late"})
		if _, err := s.Add(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if got := search(t, s, Search{Text: "late", K: 1}); len(got) != 1 || got[0] == "" {
			t.Fatalf("the last batch: %q", got)
		}
	})
}

func TestCollections(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		alice, bob := s.With("alice", nil), s.With("bob", nil)
		add(t, alice, corpus[:2])
		add(t, bob, corpus[2:])
		if got := sorted(search(t, alice, Search{Text: "Paul", K: 4})); !slices.Equal(got, []string{"anna-work", "paul-work"}) {
			t.Fatalf("alice: %q", got)
		}
		// A collection nothing was written to is empty, and not created.
		nobody := s.With("nobody", nil)
		if got := search(t, nobody, Search{Text: "Paul", K: 4}); len(got) != 0 || count(t, nobody) != 0 {
			t.Fatalf("nobody: %q", got)
		}
		if n, err := nobody.Delete(ctx, "paul-work"); n != 0 || err != nil {
			t.Fatalf("Delete in nobody = %d, %v", n, err)
		}
		if names, _ := db.Collections(ctx); !slices.Equal(names, []string{"alice", "bob"}) {
			t.Fatalf("collections %q", names)
		}
		if n, err := alice.Delete(ctx, "paul-work", "absent"); n != 1 || err != nil || count(t, alice) != 1 {
			t.Fatalf("Delete = %d, %v", n, err)
		}
		c, err := alice.Collection(ctx)
		if err != nil || c.Config().Kind != Kind || c.Config().Embedder != s.Embedder().Identity() || c.Config().Metric != mnemo.Cosine {
			t.Fatalf("collection config %+v, %v", c.Config(), err)
		}
		// Another embedder's vectors are refused; in a collection of its
		// own it is at home.
		other, _ := embed.NewHashing(64)
		for _, err := range []error{
			func() error { _, err := s.With("alice", other).Add(ctx, corpus[:1]); return err }(),
			func() error { _, err := s.With("alice", other).Search(ctx, Search{Text: "Paul", K: 1}); return err }(),
		} {
			if !errors.Is(err, embed.ErrMismatch) {
				t.Fatalf("another embedder: %v, want embed.ErrMismatch", err)
			}
		}
		add(t, s.With("small", other), corpus[:1])
		// Count and Delete involve no vectors: any embedder may.
		if n, err := s.With("small", nil).Delete(ctx, "paul-work"); n != 1 || err != nil || count(t, s.With("small", nil)) != 0 {
			t.Fatalf("Delete with another embedder = %d, %v", n, err)
		}
		// A dropped collection is created again by the next write.
		if err := db.DropCollection(ctx, "alice"); err != nil {
			t.Fatal(err)
		}
		if got := search(t, alice, Search{Text: "Anna", K: 4}); len(got) != 0 {
			t.Fatalf("after drop: %q", got)
		}
		add(t, alice, corpus[3:])
		if n := count(t, alice); n != 1 {
			t.Fatalf("after drop and add: %d documents", n)
		}
	})
}

// TestOtherCollections: a Store refuses another kind of memory's
// collection, uses one made without a kind, and searches one without a
// full-text index by vector.
func TestOtherCollections(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		e := s.Embedder()
		cfg := mnemo.CollectionConfig{Dimension: e.Dimension(), Embedder: e.Identity(), Kind: "toolmem.tools"}
		if _, err := db.CreateCollection(ctx, "tools", cfg); err != nil {
			t.Fatal(err)
		}
		if _, err := s.With("tools", nil).Add(ctx, corpus); !errors.Is(err, mnemo.ErrCollectionKind) {
			t.Fatalf("a tool memory's collection: %v, want mnemo.ErrCollectionKind", err)
		}
		cfg.Kind, cfg.Text.Disabled = "", true
		if _, err := db.CreateCollection(ctx, "plain", cfg); err != nil {
			t.Fatal(err)
		}
		plain := s.With("plain", nil)
		add(t, plain, corpus)
		if got := search(t, plain, Search{Text: "bakery", K: 1}); !slices.Equal(got, []string{"anna-work"}) {
			t.Fatalf("no full-text index: %q", got)
		}
		if _, err := plain.Search(ctx, Search{Text: "bakery", K: 1, Mode: mnemo.ModeText}); !errors.Is(err, mnemo.ErrBadQuery) {
			t.Fatalf("text mode without a full-text index: %v, want mnemo.ErrBadQuery", err)
		}
		if _, err := s.Search(ctx, Search{Text: "bakery", K: 1, Mode: "fuzzy"}); err != nil {
			t.Fatalf("an unknown mode on no collection: %v", err)
		}
		add(t, s, corpus)
		if _, err := s.Search(ctx, Search{Text: "bakery", K: 1, Mode: "fuzzy"}); !errors.Is(err, mnemo.ErrBadQuery) {
			t.Fatalf("an unknown mode: %v, want mnemo.ErrBadQuery", err)
		}
	})
}

func TestRecordsAndUpsert(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		recs, err := s.Records(ctx, corpus)
		if err != nil || len(recs) != len(corpus) || recs[1].ID != "anna-work" || recs[1].Content != corpus[1].Text || len(recs[1].Vector) != s.Embedder().Dimension() {
			t.Fatalf("Records = %v, %v", len(recs), err)
		}
		for _, name := range []string{"a", "b"} {
			if ids, err := s.With(name, nil).Upsert(ctx, recs...); err != nil || !slices.Equal(ids, idsOfDocs(corpus)) {
				t.Fatalf("Upsert in %s = %q, %v", name, ids, err)
			}
		}
		if got := search(t, s.With("b", nil), Search{Text: "bakery", K: 1}); !slices.Equal(got, []string{"anna-work"}) {
			t.Fatalf("b: %q", got)
		}
		if ids, err := s.Upsert(ctx); ids != nil || err != nil {
			t.Fatalf("Upsert() = %q, %v", ids, err)
		}
	})
}

func idsOfDocs(docs []Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

func TestReopen(t *testing.T) {
	vectorstoretest.RunReopen(t, func(t *testing.T, open func() mnemo.Store) {
		db := open()
		add(t, newStore(t, db, &Options{Collection: "notes"}), corpus)
		db.Close()
		db = open()
		s := newStore(t, db, &Options{Collection: "notes"})
		f, _ := FilterOf(map[string]any{"source": "chat"})
		if got := search(t, s, Search{Text: "where does Paul work?", K: 1, Filter: f}); !slices.Equal(got, []string{"paul-work"}) {
			t.Fatalf("after reopen: %q", got)
		}
		other, _ := embed.NewHashing(128)
		if _, err := s.With("", other).Search(ctx, Search{Text: "Paul", K: 1}); !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("reopened with another embedder: %v, want embed.ErrMismatch", err)
		}
	})
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, &Options{Collection: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	add(t, s, corpus)
	w := s.With("other", nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, corpus[:1]); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("after Close: %v, want mnemo.ErrClosed", err)
	}
	s, err = Open(dir, &Options{Collection: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := count(t, s); n != len(corpus) || s.Name() != "notes" {
		t.Fatalf("after reopen: %d documents in %q", n, s.Name())
	}
	// New leaves the database open.
	n, err := New(ctx, s.DB(), nil)
	if err != nil || n.Close() != nil || count(t, s) != len(corpus) {
		t.Fatalf("New then Close: %v", err)
	}
}

// queryEmbedder embeds queries with a prefix, as some models do.
type queryEmbedder struct {
	*embed.Hashing
	queries atomic.Int32
}

func (q *queryEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	q.queries.Add(1)
	vs, err := q.Embed(ctx, []string{"query: " + text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

func TestQueryEmbedder(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		h, _ := embed.NewHashing(0)
		q := &queryEmbedder{Hashing: h}
		s := newStore(t, db, &Options{Embedder: q})
		add(t, s, corpus)
		if got := search(t, s, Search{Text: "Anna bakery", K: 1}); !slices.Equal(got, []string{"anna-work"}) || q.queries.Load() != 1 {
			t.Fatalf("%q, %d queries embedded with EmbedQuery", got, q.queries.Load())
		}
	})
}

func TestQuery(t *testing.T) {
	v := []float32{1, 0}
	f, _ := FilterOf(`{"a": 1}`)
	half := float32(0.5)
	tests := []struct {
		name string
		q    Search
		want mnemo.Query
	}{
		{"auto", Search{Text: "x", K: 3}, mnemo.Query{Vector: v, Text: "x", K: 3}},
		{"hybrid with all", Search{Text: "x", K: 3, MinScore: new(0.5), Filter: f, Mode: mnemo.ModeHybrid},
			mnemo.Query{Vector: v, Text: "x", K: 3, MinSimilarity: &half, Filter: f, Mode: mnemo.ModeHybrid}},
		{"vector: no words", Search{Text: "x", K: 3, Mode: mnemo.ModeVector}, mnemo.Query{Vector: v, K: 3, Mode: mnemo.ModeVector}},
		{"text: the vector too", Search{Text: "x", K: 3, Mode: mnemo.ModeText}, mnemo.Query{Vector: v, Text: "x", K: 3, Mode: mnemo.ModeText}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.q.Query(v)
			if (got.MinSimilarity == nil) != (tt.want.MinSimilarity == nil) || got.MinSimilarity != nil && *got.MinSimilarity != *tt.want.MinSimilarity {
				t.Fatalf("minimum similarity %v, want %v", got.MinSimilarity, tt.want.MinSimilarity)
			}
			got.MinSimilarity, tt.want.MinSimilarity = nil, nil
			if got.Text != tt.want.Text || got.Mode != tt.want.Mode || got.K != tt.want.K || got.Filter != tt.want.Filter || !slices.Equal(got.Vector, tt.want.Vector) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
