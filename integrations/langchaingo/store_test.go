package mnemo

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

var ctx = context.Background()

var corpus = []schema.Document{
	{PageContent: "Paul works at Google as an engineer", Metadata: map[string]any{"source": "chat", "year": 2026}},
	{PageContent: "Anna works at a bakery in Lyon", Metadata: map[string]any{"source": "chat", "year": 2024}},
	{PageContent: "The weather in Paris is rainy today", Metadata: map[string]any{"source": "web", "year": 2026}},
	{PageContent: "Paul likes hiking in the Alps", Metadata: map[string]any{"source": "web", "year": 2020}},
}

// newStore returns a store in db, failing the test on an error.
func newStore(t *testing.T, db mnemo.Store, opts *Options) *Store {
	t.Helper()
	s, err := NewStore(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func add(t *testing.T, vs vectorstores.VectorStore, docs []schema.Document, opts ...vectorstores.Option) []string {
	t.Helper()
	ids, err := vs.AddDocuments(ctx, docs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(docs) {
		t.Fatalf("AddDocuments returned %d ids for %d documents", len(ids), len(docs))
	}
	return ids
}

func contents(docs []schema.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.PageContent
	}
	return out
}

func TestAddAndSearch(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		var vs vectorstores.VectorStore = newStore(t, db, nil)
		add(t, vs, corpus)
		docs, err := vs.SimilaritySearch(ctx, "where does Paul work?", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 2 || docs[0].PageContent != corpus[0].PageContent {
			t.Fatalf("got %q, want %q first", contents(docs), corpus[0].PageContent)
		}
		if docs[0].Score <= docs[1].Score || docs[0].Score > 1 || docs[1].Score <= 0 {
			t.Fatalf("scores %v, %v: want descending in (0, 1]", docs[0].Score, docs[1].Score)
		}
		if docs[0].Metadata["source"] != "chat" || docs[0].Metadata["year"] != float64(2026) {
			t.Fatalf("metadata %v", docs[0].Metadata)
		}
		// The retriever langchaingo builds on any vector store.
		got, err := vectorstores.ToRetriever(vs, 1).GetRelevantDocuments(ctx, "rain in Paris")
		if err != nil || len(got) != 1 || got[0].PageContent != corpus[2].PageContent {
			t.Fatalf("retriever: %q, %v", contents(got), err)
		}
	})
}

func TestScoreMatchesEmbedder(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus[:1])
		h, _ := embed.NewHashing(0)
		vs, _ := h.Embed(ctx, []string{corpus[0].PageContent, "Paul engineer"})
		var dot float32
		for i := range vs[0] {
			dot += vs[0][i] * vs[1][i]
		}
		docs, err := s.SimilaritySearch(ctx, "Paul engineer", 1)
		if err != nil {
			t.Fatal(err)
		}
		if d := docs[0].Score - dot; d > 1e-5 || d < -1e-5 {
			t.Fatalf("score %v, want the cosine similarity %v", docs[0].Score, dot)
		}
	})
}

func TestScoreThreshold(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus)
		all, err := s.SimilaritySearch(ctx, "Paul works at Google", 4)
		if err != nil || len(all) != 4 {
			t.Fatalf("%d docs, %v", len(all), err)
		}
		cut := all[1].Score // keeps exactly the first two (a hit at the threshold is kept)
		docs, err := s.SimilaritySearch(ctx, "Paul works at Google", 4, vectorstores.WithScoreThreshold(cut))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(contents(docs), contents(all[:2])) {
			t.Fatalf("threshold %v kept %q, want %q", cut, contents(docs), contents(all[:2]))
		}
		for _, bad := range []float32{-0.1, 1.5} {
			_, err := s.SimilaritySearch(ctx, "Paul", 4, vectorstores.WithScoreThreshold(bad))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("threshold %v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestFilters(t *testing.T) {
	f, _ := mnemo.ParseFilter(`{"year": {"$lt": 2025}}`)
	tests := []struct {
		name   string
		filter any
		want   []string
	}{
		{"equality", map[string]any{"source": "web"}, []string{corpus[3].PageContent, corpus[2].PageContent}},
		{"operator", map[string]any{"year": map[string]any{"$gte": 2025}}, []string{corpus[0].PageContent, corpus[2].PageContent}},
		{"and of typed maps, as Chroma's store builds", map[string]any{"$and": []map[string]any{{"source": "chat"}, {"year": 2024}}}, []string{corpus[1].PageContent}},
		{"json text", `{"$or": [{"year": 2020}, {"year": 2024}]}`, []string{corpus[3].PageContent, corpus[1].PageContent}},
		{"engine filter", f, []string{corpus[3].PageContent, corpus[1].PageContent}},
		{"nothing admitted", map[string]any{"source": "mail"}, []string{}},
	}
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				docs, err := s.SimilaritySearch(ctx, "Paul hiking", 4, vectorstores.WithFilters(tt.filter))
				if err != nil {
					t.Fatal(err)
				}
				got := contents(docs)
				slices.Sort(got)
				want := slices.Clone(tt.want)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("got %q, want %q", got, want)
				}
			})
		}
		for _, bad := range []any{`{"year": {"$near": 1}}`, map[string]any{"year": map[string]any{"$gt": 1, "$lt": 3}}, "{", func() {}} {
			_, err := s.SimilaritySearch(ctx, "Paul", 4, vectorstores.WithFilters(bad))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("filter %#v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestNamespacesAndDelete(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		ids := add(t, s, corpus[:2], vectorstores.WithNameSpace("alice"))
		add(t, s, corpus[2:], vectorstores.WithNameSpace("bob"))
		docs, err := s.SimilaritySearch(ctx, "Paul", 4, vectorstores.WithNameSpace("alice"))
		if err != nil || !slices.Equal(contents(docs), contents(corpus[:2])) {
			t.Fatalf("alice: %q, %v", contents(docs), err)
		}
		docs, err = s.SimilaritySearch(ctx, "Paul", 4, vectorstores.WithNameSpace("nobody"))
		if err != nil || len(docs) != 0 {
			t.Fatalf("an unused namespace: %q, %v", contents(docs), err)
		}
		if got, err := s.DB().Collections(ctx); err != nil || !slices.Equal(got, []string{"alice", "bob"}) {
			t.Fatalf("collections %q, %v", got, err)
		}
		n, err := s.Delete(ctx, []string{ids[0], "absent"}, vectorstores.WithNameSpace("alice"))
		if err != nil || n != 1 {
			t.Fatalf("Delete = %d, %v", n, err)
		}
		docs, err = s.SimilaritySearch(ctx, "Paul", 4, vectorstores.WithNameSpace("alice"))
		if err != nil || !slices.Equal(contents(docs), contents(corpus[1:2])) {
			t.Fatalf("after Delete: %q, %v", contents(docs), err)
		}
		if n, err := s.Delete(ctx, ids, vectorstores.WithNameSpace("nobody")); err != nil || n != 0 {
			t.Fatalf("Delete in an unused namespace = %d, %v", n, err)
		}
	})
}

func TestDeduplicater(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus[:1])
		seen := func(ctx context.Context, d schema.Document) bool {
			docs, err := s.SimilaritySearch(ctx, d.PageContent, 1, vectorstores.WithScoreThreshold(0.999))
			return err == nil && len(docs) == 1
		}
		ids, err := s.AddDocuments(ctx, corpus[:2], vectorstores.WithDeduplicater(seen))
		if err != nil || len(ids) != 1 {
			t.Fatalf("AddDocuments = %q, %v; want one new document", ids, err)
		}
		if n := vectorstoretest.Count(t, db, DefaultCollection); n != 2 {
			t.Fatalf("%d records, want 2", n)
		}
	})
}

func TestBadInput(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		zs := newStore(t, db, &Options{Collection: "zero", Embedder: vectorstoretest.Zero{}})
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"empty document", func() error { _, err := s.AddDocuments(ctx, []schema.Document{{PageContent: " "}}); return err }(), ErrEmpty},
			{"zero vector", func() error { _, err := zs.AddDocuments(ctx, corpus[:1]); return err }(), ErrEmpty},
			{"zero query vector", func() error { _, err := zs.SimilaritySearch(ctx, "Paul", 1); return err }(), ErrEmpty},
			{"invalid UTF-8", func() error { _, err := s.AddDocuments(ctx, []schema.Document{{PageContent: "a\xff"}}); return err }(), ErrInvalid},
			{"threshold on add", func() error {
				_, err := s.AddDocuments(ctx, corpus, vectorstores.WithScoreThreshold(0.5))
				return err
			}(), ErrInvalid},
			{"no results wanted", func() error { _, err := s.SimilaritySearch(ctx, "Paul", 0); return err }(), ErrInvalid},
			{"empty query", func() error { _, err := s.SimilaritySearch(ctx, "", 1); return err }(), ErrEmpty},
			{"metadata JSON cannot carry", func() error {
				_, err := s.AddDocuments(ctx, []schema.Document{{PageContent: "x", Metadata: map[string]any{"f": func() {}}}})
				return err
			}(), mnemo.ErrInvalidRecord},
			{"nil database", func() error { _, err := NewStore(ctx, nil, nil); return err }(), ErrInvalid},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
		if n := vectorstoretest.Count(t, db, DefaultCollection); n != 0 {
			t.Fatalf("a refused add stored %d records", n)
		}
	})
}

func TestEmbedderOption(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		s := newStore(t, db, nil)
		add(t, s, corpus)
		h, _ := embed.NewHashing(0)
		// A plain langchaingo embedder cannot say what space it embeds into.
		theirs, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(h.Embed))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.SimilaritySearch(ctx, "Paul", 1, vectorstores.WithEmbedder(theirs))
		if !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("plain embedder: %v, want ErrNoIdentity", err)
		}
		// Wrapped with the hashing embedder's identity, it searches the same space.
		same, err := NewForeignEmbedder(theirs, h.Dimension(), h.Identity())
		if err != nil {
			t.Fatal(err)
		}
		docs, err := s.SimilaritySearch(ctx, "Anna bakery", 1, vectorstores.WithEmbedder(same))
		if err != nil || len(docs) != 1 || docs[0].PageContent != corpus[1].PageContent {
			t.Fatalf("same space: %q, %v", contents(docs), err)
		}
		// Under another identity, the collection refuses it.
		other, _ := NewForeignEmbedder(theirs, h.Dimension(), "other/model/384")
		_, err = s.SimilaritySearch(ctx, "Paul", 1, vectorstores.WithEmbedder(other))
		if !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("other identity: %v, want embed.ErrMismatch", err)
		}
		_, err = s.AddDocuments(ctx, corpus[:1], vectorstores.WithEmbedder(other))
		if !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("add with other identity: %v, want embed.ErrMismatch", err)
		}
		// In a namespace of its own, it builds its own collection.
		add(t, s, corpus[:1], vectorstores.WithEmbedder(other), vectorstores.WithNameSpace("other"))
		c, err := db.Collection(ctx, "other")
		if err != nil || c.Config().Embedder != "other/model/384" {
			t.Fatalf("collection embedder: %v", err)
		}
	})
}

// TestPersistence: documents stored through one handle of a database are
// found through the next, on every backend.
func TestPersistence(t *testing.T) {
	vectorstoretest.RunReopen(t, func(t *testing.T, open func() mnemo.Store) {
		db := open()
		ids := add(t, newStore(t, db, nil), corpus, vectorstores.WithNameSpace("notes"))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open()
		s := newStore(t, db, nil)
		docs, err := s.SimilaritySearch(ctx, "where does Paul work?", 1, vectorstores.WithNameSpace("notes"),
			vectorstores.WithFilters(map[string]any{"source": "chat"}))
		if err != nil || len(docs) != 1 || docs[0].PageContent != corpus[0].PageContent {
			t.Fatalf("after reopen: %q, %v", contents(docs), err)
		}
		if n, err := s.Delete(ctx, ids, vectorstores.WithNameSpace("notes")); err != nil || n != len(ids) {
			t.Fatalf("Delete after reopen = %d, %v", n, err)
		}
		// Reopening with another embedder is refused, not mixed.
		other, _ := embed.NewHashing(128)
		s2 := newStore(t, db, &Options{Collection: "notes", Embedder: other})
		if _, err := s2.SimilaritySearch(ctx, "Paul", 1); !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("other embedder: %v, want embed.ErrMismatch", err)
		}
	})
}

// TestOpenStore: OpenStore owns a database in a directory, which Close
// closes; NewStore leaves the caller's open.
func TestOpenStore(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	add(t, s, corpus)
	borrowed := newStore(t, s.DB(), nil)
	if err := borrowed.Close(); err != nil {
		t.Fatal(err)
	}
	if docs, err := s.SimilaritySearch(ctx, "Paul", 1); err != nil || len(docs) != 1 {
		t.Fatalf("after closing a NewStore: %q, %v", contents(docs), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := vectorstoretest.Count(t, s.DB(), DefaultCollection); n != len(corpus) {
		t.Fatalf("after reopen: %d records", n)
	}
}

// TestModes: the store searches hybrid by default; Options.Mode chooses
// words alone (only documents holding a query word) or vectors alone.
func TestModes(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		for _, tc := range []struct {
			mode mnemo.Mode
			want int // documents found for "bakery" with k 4
		}{{"", 4}, {mnemo.ModeHybrid, 4}, {mnemo.ModeVector, 4}, {mnemo.ModeText, 1}} {
			s := newStore(t, db, &Options{Collection: "mode-" + string(tc.mode), Mode: tc.mode})
			add(t, s, corpus)
			docs, err := s.SimilaritySearch(ctx, "bakery", 4)
			if err != nil || len(docs) != tc.want || docs[0].PageContent != corpus[1].PageContent || docs[0].Score <= 0 {
				t.Fatalf("mode %q: %q, %v", tc.mode, contents(docs), err)
			}
		}
		s := newStore(t, db, &Options{Collection: "fuzzy", Mode: "fuzzy"})
		add(t, s, corpus)
		if _, err := s.SimilaritySearch(ctx, "bakery", 4); !errors.Is(err, mnemo.ErrBadQuery) {
			t.Fatalf("unknown mode: %v", err)
		}
	})
}
