package mnemo

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudwego/eino/components/embedding"
	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

var ctx = context.Background()

func corpus() []*schema.Document {
	return []*schema.Document{
		{ID: "paul-work", Content: "Paul works at Google as an engineer", MetaData: map[string]any{"source": "chat", "year": 2026}},
		{ID: "anna-work", Content: "Anna works at a bakery in Lyon", MetaData: map[string]any{"source": "chat", "year": 2024}},
		{ID: "weather", Content: "The weather in Paris is rainy today", MetaData: map[string]any{"source": "web", "year": 2026}},
		{ID: "paul-hike", Content: "Paul likes hiking in the Alps", MetaData: map[string]any{"source": "web", "year": 2020}},
	}
}

func setup(t *testing.T, db mnemo.Store) (indexer.Indexer, retriever.Retriever) {
	t.Helper()
	ix, err := NewIndexer(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRetriever(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix, r
}

func ids(docs []*schema.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out
}

func TestStoreAndRetrieve(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		got, err := ix.Store(ctx, corpus())
		if err != nil || !slices.Equal(got, ids(corpus())) {
			t.Fatalf("Store = %q, %v", got, err)
		}
		docs, err := r.Retrieve(ctx, "where does Paul work?", retriever.WithTopK(2))
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != 2 || docs[0].ID != "paul-work" || docs[0].Content != corpus()[0].Content {
			t.Fatalf("got %q", ids(docs))
		}
		if s0, s1 := docs[0].Score(), docs[1].Score(); s0 <= s1 || s0 > 1 || s1 <= 0 {
			t.Fatalf("scores %v, %v: want descending in (0, 1]", s0, s1)
		}
		if docs[0].MetaData["source"] != "chat" || docs[0].MetaData["year"] != float64(2026) {
			t.Fatalf("metadata %v", docs[0].MetaData)
		}
		// The default top k.
		if docs, _ := r.Retrieve(ctx, "Paul"); len(docs) != DefaultTopK {
			t.Fatalf("%d documents, want %d", len(docs), DefaultTopK)
		}
	})
}

func TestScoreIsCosineSimilarity(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		ix.Store(ctx, corpus()[:1])
		h, _ := embed.NewHashing(0)
		vs, _ := h.Embed(ctx, []string{corpus()[0].Content, "Paul engineer"})
		var dot float64
		for i := range vs[0] {
			dot += float64(vs[0][i] * vs[1][i])
		}
		docs, err := r.Retrieve(ctx, "Paul engineer", retriever.WithTopK(1))
		if err != nil {
			t.Fatal(err)
		}
		if d := docs[0].Score() - dot; d > 1e-5 || d < -1e-5 {
			t.Fatalf("score %v, want the cosine similarity %v", docs[0].Score(), dot)
		}
	})
}

func TestScoreThreshold(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		ix.Store(ctx, corpus())
		all, err := r.Retrieve(ctx, "Paul works at Google", retriever.WithTopK(4))
		if err != nil || len(all) != 4 {
			t.Fatalf("%d documents, %v", len(all), err)
		}
		cut := all[1].Score() // a document exactly at the threshold is kept
		docs, err := r.Retrieve(ctx, "Paul works at Google", retriever.WithTopK(4), retriever.WithScoreThreshold(cut))
		if err != nil || !slices.Equal(ids(docs), ids(all[:2])) {
			t.Fatalf("threshold %v kept %q, %v; want %q", cut, ids(docs), err, ids(all[:2]))
		}
		// A threshold in the config is the default.
		r2, _ := NewRetriever(ctx, db, &RetrieverConfig{ScoreThreshold: &cut})
		if docs, _ := r2.Retrieve(ctx, "Paul works at Google"); !slices.Equal(ids(docs), ids(all[:2])) {
			t.Fatalf("config threshold kept %q", ids(docs))
		}
		for _, bad := range []float64{-1.5, 2} {
			if _, err := r.Retrieve(ctx, "Paul", retriever.WithScoreThreshold(bad)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("threshold %v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestFilter(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		ix.Store(ctx, corpus())
		f, _ := mnemo.ParseFilter(`{"year": {"$lt": 2025}}`)
		tests := []struct {
			name   string
			filter any
			want   []string
		}{
			{"json text", `{"source": "web"}`, []string{"paul-hike", "weather"}},
			{"map", map[string]any{"$and": []any{map[string]any{"source": "chat"}, map[string]any{"year": map[string]any{"$gte": 2025}}}}, []string{"paul-work"}},
			{"engine filter", f, []string{"anna-work", "paul-hike"}},
			{"nothing admitted", `{"source": "mail"}`, []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				docs, err := r.Retrieve(ctx, "Paul hiking", retriever.WithTopK(4), WithFilter(tt.filter))
				if err != nil {
					t.Fatal(err)
				}
				got := ids(docs)
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			})
		}
		for _, bad := range []any{`{"year": {"$near": 1}}`, "{", 42} {
			if _, err := r.Retrieve(ctx, "Paul", WithFilter(bad)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("filter %#v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestUpsertAndSubIndexes(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		if _, err := ix.Store(ctx, corpus(), indexer.WithSubIndexes([]string{"a", "b"})); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b"} {
			docs, err := r.Retrieve(ctx, "Anna bakery", retriever.WithSubIndex(name), retriever.WithTopK(1))
			if err != nil || len(docs) != 1 || docs[0].ID != "anna-work" {
				t.Fatalf("sub index %s: %q, %v", name, ids(docs), err)
			}
		}
		if docs, err := r.Retrieve(ctx, "Anna"); err != nil || len(docs) != 0 {
			t.Fatalf("the default collection, never written: %q, %v", ids(docs), err)
		}
		// Storing a document again under its ID replaces it; a retrieved
		// document's score is not stored with it.
		docs, _ := r.Retrieve(ctx, "Anna bakery", retriever.WithIndex("a"), retriever.WithTopK(1))
		docs[0].Content = "Anna now works at a school in Lyon"
		if _, err := ix.Store(ctx, docs, indexer.WithSubIndexes([]string{"a"})); err != nil {
			t.Fatal(err)
		}
		c, _ := db.Collection(ctx, "a")
		rec, _, _ := c.Get(ctx, "anna-work")
		if n, _ := c.Count(ctx); n != 4 || rec.Content != docs[0].Content || rec.Metadata["_score"] != nil || rec.Metadata["source"] != "chat" {
			t.Fatalf("after re-store: %d records, %q, %v", n, rec.Content, rec.Metadata)
		}
		// A document without an ID gets one.
		got, err := ix.Store(ctx, []*schema.Document{{Content: "no id here"}})
		if err != nil || len(got) != 1 || got[0] == "" {
			t.Fatalf("Store without an ID = %q, %v", got, err)
		}
	})
}

func TestBadInput(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		zix, _ := NewIndexer(ctx, db, &IndexerConfig{Collection: "zero", Embedder: vectorstoretest.Zero{}})
		zr, _ := NewRetriever(ctx, db, &RetrieverConfig{Collection: "zero", Embedder: vectorstoretest.Zero{}})
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"empty content", func() error { _, err := ix.Store(ctx, []*schema.Document{{Content: " "}}); return err }(), ErrEmpty},
			{"zero vector", func() error { _, err := zix.Store(ctx, corpus()); return err }(), ErrEmpty},
			{"zero query vector", func() error { _, err := zr.Retrieve(ctx, "Paul"); return err }(), ErrEmpty},
			{"invalid UTF-8", func() error { _, err := ix.Store(ctx, []*schema.Document{{Content: "a\xff"}}); return err }(), ErrInvalid},
			{"nil document", func() error { _, err := ix.Store(ctx, []*schema.Document{nil}); return err }(), ErrInvalid},
			{"bad ID", func() error {
				_, err := ix.Store(ctx, []*schema.Document{{ID: "a\xff", Content: "text"}})
				return err
			}(), mnemo.ErrInvalidID},
			{"top k 0", func() error { _, err := r.Retrieve(ctx, "Paul", retriever.WithTopK(0)); return err }(), ErrInvalid},
			{"empty query", func() error { _, err := r.Retrieve(ctx, ""); return err }(), ErrEmpty},
			{"DSL info", func() error { _, err := r.Retrieve(ctx, "Paul", retriever.WithDSLInfo(map[string]any{})); return err }(), ErrInvalid},
			{"nil database", func() error { _, err := NewIndexer(ctx, nil, nil); return err }(), ErrInvalid},
			{"negative top k in config", func() error {
				_, err := NewRetriever(ctx, db, &RetrieverConfig{TopK: -1})
				return err
			}(), ErrInvalid},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
	})
}

// floatEmbedder is an Eino embedder over mnemo's hashing one.
type floatEmbedder struct{ h *embed.Hashing }

func (f floatEmbedder) EmbedStrings(ctx context.Context, texts []string, _ ...embedding.Option) ([][]float64, error) {
	vs, err := f.h.Embed(ctx, texts)
	out := make([][]float64, len(vs))
	for i, v := range vs {
		for _, x := range v {
			out[i] = append(out[i], float64(x))
		}
	}
	return out, err
}

func TestEmbeddingOption(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		ix.Store(ctx, corpus())
		h, _ := embed.NewHashing(0)
		theirs := floatEmbedder{h}
		if _, err := r.Retrieve(ctx, "Paul", retriever.WithEmbedding(theirs)); !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("plain Eino embedder: %v, want ErrNoIdentity", err)
		}
		same, _ := NewForeignEmbedder(theirs, h.Dimension(), h.Identity())
		docs, err := r.Retrieve(ctx, "Anna bakery", retriever.WithEmbedding(same), retriever.WithTopK(1))
		if err != nil || len(docs) != 1 || docs[0].ID != "anna-work" {
			t.Fatalf("same space: %q, %v", ids(docs), err)
		}
		other, _ := NewForeignEmbedder(theirs, h.Dimension(), "other/model/384")
		if _, err := r.Retrieve(ctx, "Paul", retriever.WithEmbedding(other)); !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("other identity: %v, want embed.ErrMismatch", err)
		}
		if _, err := ix.Store(ctx, corpus(), indexer.WithEmbedding(other)); !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("store with other identity: %v, want embed.ErrMismatch", err)
		}
		if _, err := ix.Store(ctx, corpus(), indexer.WithEmbedding(theirs)); !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("store with a plain Eino embedder: %v, want ErrNoIdentity", err)
		}
	})
}

// TestPersistence: documents stored through one handle of a database are
// retrieved through the next, on every backend.
func TestPersistence(t *testing.T) {
	vectorstoretest.RunReopen(t, func(t *testing.T, open func() mnemo.Store) {
		db := open()
		ix, _ := NewIndexer(ctx, db, &IndexerConfig{Collection: "notes"})
		if _, err := ix.Store(ctx, corpus()); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open()
		r, _ := NewRetriever(ctx, db, &RetrieverConfig{Collection: "notes"})
		docs, err := r.Retrieve(ctx, "where does Paul work?", retriever.WithTopK(1), WithFilter(`{"source": "chat"}`))
		if err != nil || len(docs) != 1 || docs[0].ID != "paul-work" {
			t.Fatalf("after reopen: %q, %v", ids(docs), err)
		}
		other, _ := embed.NewHashing(128)
		r2, _ := NewRetriever(ctx, db, &RetrieverConfig{Collection: "notes", Embedder: other})
		if _, err := r2.Retrieve(ctx, "Paul"); !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("reopened with another embedder: %v, want embed.ErrMismatch", err)
		}
	})
}

// TestModes: the retriever searches hybrid by default; the config's Mode
// or WithMode chooses words alone (only documents holding a query word)
// or vectors alone.
func TestModes(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		ix, r := setup(t, db)
		if _, err := ix.Store(ctx, corpus()); err != nil {
			t.Fatal(err)
		}
		for mode, want := range map[mnemo.Mode]int{"": 4, mnemo.ModeHybrid: 4, mnemo.ModeVector: 4, mnemo.ModeText: 1} {
			docs, err := r.Retrieve(ctx, "bakery", retriever.WithTopK(4), WithMode(mode))
			if err != nil || len(docs) != want || docs[0].ID != "anna-work" || docs[0].Score() <= 0 {
				t.Fatalf("mode %q: %q, %v", mode, ids(docs), err)
			}
		}
		text, err := NewRetriever(ctx, db, &RetrieverConfig{Mode: mnemo.ModeText})
		if err != nil {
			t.Fatal(err)
		}
		if docs, err := text.Retrieve(ctx, "bakery", retriever.WithTopK(4)); err != nil || len(docs) != 1 {
			t.Fatalf("config mode text: %q, %v", ids(docs), err)
		}
		if _, err := r.Retrieve(ctx, "bakery", WithMode("fuzzy")); !errors.Is(err, mnemo.ErrBadQuery) {
			t.Fatalf("unknown mode: %v", err)
		}
	})
}
