package mnemo

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

var ctx = context.Background()

func corpus() []*ai.Document {
	return []*ai.Document{
		ai.DocumentFromText("Paul works at Google as an engineer", map[string]any{"source": "chat", "year": 2026}),
		ai.DocumentFromText("Anna works at a bakery in Lyon", map[string]any{"source": "chat", "year": 2024}),
		ai.DocumentFromText("The weather in Paris is rainy today", map[string]any{"source": "web", "year": 2026}),
		ai.DocumentFromText("Paul likes hiking in the Alps", map[string]any{"source": "web", "year": 2020}),
	}
}

func setup(t *testing.T, db mnemo.Store) (*genkit.Genkit, *DocStore, ai.Retriever) {
	t.Helper()
	g := genkit.Init(ctx)
	ds, r, err := DefineRetriever(ctx, g, db, "notes", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g, ds, r
}

func texts(docs []*ai.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i], _ = text(d)
	}
	return out
}

func retrieve(t *testing.T, g *genkit.Genkit, r ai.Retriever, query string, opts any) []*ai.Document {
	t.Helper()
	resp, err := genkit.Retrieve(ctx, g, ai.WithRetriever(r), ai.WithTextDocs(query), ai.WithConfig(opts))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Documents
}

func score(d *ai.Document) float64 {
	s, _ := d.Metadata[ScoreKey].(float64)
	return s
}

func TestIndexAndRetrieve(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g, ds, r := setup(t, db)
		if err := Index(ctx, corpus(), ds); err != nil {
			t.Fatal(err)
		}
		if !IsDefinedRetriever(g, "notes") || Retriever(g, "notes") == nil || r.Name() != "mnemo/notes" {
			t.Fatalf("retriever %q not registered", r.Name())
		}
		docs := retrieve(t, g, r, "where does Paul work?", &RetrieverOptions{K: 2})
		if got := texts(docs); len(got) != 2 || got[0] != texts(corpus())[0] {
			t.Fatalf("got %q", got)
		}
		if s0, s1 := score(docs[0]), score(docs[1]); s0 <= s1 || s0 > 1 || s1 <= 0 {
			t.Fatalf("scores %v, %v: want descending in (0, 1]", s0, s1)
		}
		if docs[0].Metadata["source"] != "chat" || docs[0].Metadata["year"] != float64(2026) {
			t.Fatalf("metadata %v", docs[0].Metadata)
		}
		if docs := retrieve(t, g, r, "Paul", nil); len(docs) != DefaultK {
			t.Fatalf("%d documents, want %d", len(docs), DefaultK)
		}
		// Looked up by name, as a flow would.
		resp, err := genkit.Retrieve(ctx, g, ai.WithRetrieverName("mnemo/notes"), ai.WithTextDocs("Anna"),
			ai.WithConfig(map[string]any{"k": 1}))
		if err != nil || len(resp.Documents) != 1 || texts(resp.Documents)[0] != texts(corpus())[1] {
			t.Fatalf("by name, options as JSON: %v", err)
		}
	})
}

func TestIndexIsIdempotent(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g, ds, r := setup(t, db)
		Index(ctx, corpus(), ds)
		ids, err := ds.Index(ctx, append(corpus(), corpus()[0]))
		if err != nil || len(ids) != 5 || ids[4] != ids[0] || vectorstoretest.Count(t, db, "notes") != 4 {
			t.Fatalf("indexing again: %q, %v, %d records", ids, err, vectorstoretest.Count(t, db, "notes"))
		}
		// A retrieved document indexed again is the same document.
		docs := retrieve(t, g, r, "Anna bakery", &RetrieverOptions{K: 1})
		if err := Index(ctx, docs, ds); err != nil || vectorstoretest.Count(t, db, "notes") != 4 {
			t.Fatalf("re-indexing a retrieved document: %v, %d records", err, vectorstoretest.Count(t, db, "notes"))
		}
		n, err := ds.Delete(ctx, ids[0], "absent")
		if err != nil || n != 1 || vectorstoretest.Count(t, db, "notes") != 3 {
			t.Fatalf("Delete = %d, %v", n, err)
		}
		if got := texts(retrieve(t, g, r, "Paul works at Google", &RetrieverOptions{K: 4})); slices.Contains(got, texts(corpus())[0]) {
			t.Fatalf("a deleted document is retrieved: %q", got)
		}
	})
}

func TestMinScore(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g, ds, r := setup(t, db)
		Index(ctx, corpus(), ds)
		all := retrieve(t, g, r, "Paul works at Google", &RetrieverOptions{K: 4})
		cut := score(all[1]) // a document exactly at the minimum is kept
		docs := retrieve(t, g, r, "Paul works at Google", &RetrieverOptions{K: 4, MinScore: &cut})
		if !slices.Equal(texts(docs), texts(all[:2])) {
			t.Fatalf("minimum %v kept %q, want %q", cut, texts(docs), texts(all[:2]))
		}
		for _, bad := range []float64{-2, 1.5} {
			_, err := genkit.Retrieve(ctx, g, ai.WithRetriever(r), ai.WithTextDocs("Paul"), ai.WithConfig(&RetrieverOptions{MinScore: &bad}))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("minimum %v: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

func TestFilter(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g, ds, r := setup(t, db)
		Index(ctx, corpus(), ds)
		c := texts(corpus())
		f, _ := mnemo.ParseFilter(`{"year": {"$lt": 2025}}`)
		tests := []struct {
			name   string
			filter any
			want   []string
		}{
			{"json text", `{"source": "web"}`, []string{c[3], c[2]}},
			{"map", map[string]any{"$and": []map[string]any{{"source": "chat"}, {"year": map[string]any{"$gte": 2025}}}}, []string{c[0]}},
			{"engine filter", f, []string{c[1], c[3]}},
			{"nothing admitted", `{"source": "mail"}`, []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := texts(retrieve(t, g, r, "Paul hiking", &RetrieverOptions{K: 4, Filter: tt.filter}))
				slices.Sort(got)
				want := slices.Clone(tt.want)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("got %q, want %q", got, want)
				}
			})
		}
		// A filter sent as JSON, as the developer UI does.
		resp, err := genkit.Retrieve(ctx, g, ai.WithRetriever(r), ai.WithTextDocs("Paul"),
			ai.WithConfig(map[string]any{"k": 4, "filter": map[string]any{"year": 2020}}))
		if err != nil || !slices.Equal(texts(resp.Documents), []string{c[3]}) {
			t.Fatalf("JSON options: %q, %v", texts(resp.Documents), err)
		}
	})
}

func TestBadInput(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g, ds, r := setup(t, db)
		zds, _, err := DefineRetriever(ctx, g, db, "zero", &Config{Embedder: vectorstoretest.Zero{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		Index(ctx, corpus(), ds)
		media := &ai.Document{Content: []*ai.Part{ai.NewMediaPart("image/png", "data:image/png;base64,AAAA")}}
		retrieveErr := func(query *ai.Document, opts any) error {
			_, err := genkit.Retrieve(ctx, g, ai.WithRetriever(r), ai.WithDocs(query), ai.WithConfig(opts))
			return err
		}
		direct := func(opts any) error {
			_, err := ds.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("Paul", nil), Options: opts})
			return err
		}
		for _, opts := range []any{map[string]any{"topK": 3}, 3} {
			if err := retrieveErr(ai.DocumentFromText("Paul", nil), opts); err == nil {
				t.Errorf("options %v: no error", opts)
			}
		}
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"empty document", Index(ctx, []*ai.Document{ai.DocumentFromText(" ", nil)}, ds), ErrEmpty},
			{"zero vector", Index(ctx, corpus(), zds), ErrEmpty},
			{"zero query vector", func() error {
				_, err := zds.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText("Paul", nil)})
				return err
			}(), ErrEmpty},
			{"invalid UTF-8", Index(ctx, []*ai.Document{ai.DocumentFromText("a\xff", nil)}, ds), ErrInvalid},
			{"media", Index(ctx, []*ai.Document{media}, ds), ErrInvalid},
			{"nil document", Index(ctx, []*ai.Document{nil}, ds), ErrInvalid},
			{"nil DocStore", Index(ctx, corpus(), nil), ErrInvalid},
			{"empty query", retrieveErr(ai.DocumentFromText("", nil), nil), ErrEmpty},
			{"media query", retrieveErr(media, nil), ErrInvalid},
			{"negative k", retrieveErr(ai.DocumentFromText("Paul", nil), &RetrieverOptions{K: -1}), ErrInvalid},
			{"bad filter", retrieveErr(ai.DocumentFromText("Paul", nil), &RetrieverOptions{Filter: `{"a": {"$near": 1}}`}), ErrInvalid},
			// Genkit checks options against the retriever's schema first; the
			// DocStore checks them too, for a retriever defined without it.
			{"unknown option", direct(map[string]any{"topK": 3}), ErrInvalid},
			{"options of another type", direct(3), ErrInvalid},
			{"no database", func() error { _, _, err := DefineRetriever(ctx, g, nil, "x", nil, nil); return err }(), ErrInvalid},
			// Genkit panics on a second registration of a name.
			{"defined twice", func() error { _, _, err := DefineRetriever(ctx, g, db, "notes", nil, nil); return err }(), ErrInvalid},
			{"opened where defined", func() error { _, _, err := OpenRetriever("", g, "notes", nil, nil); return err }(), ErrInvalid},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
		if n := vectorstoretest.Count(t, db, "notes"); n != 4 {
			t.Fatalf("refused documents were stored: %d records", n)
		}
	})
}

// TestPersistence: documents indexed through one handle of a database
// are retrieved through the next, on every backend.
func TestPersistence(t *testing.T) {
	vectorstoretest.RunReopen(t, func(t *testing.T, open func() mnemo.Store) {
		db := open()
		_, ds, _ := setup(t, db)
		if err := Index(ctx, corpus(), ds); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open()
		g, _, r := setup(t, db)
		docs := retrieve(t, g, r, "where does Paul work?", &RetrieverOptions{K: 1, Filter: `{"source": "chat"}`})
		if got := texts(docs); len(got) != 1 || got[0] != texts(corpus())[0] {
			t.Fatalf("after reopen: %q", got)
		}
		other, _ := embed.NewHashing(128)
		if _, _, err := DefineRetriever(ctx, genkit.Init(ctx), db, "notes", &Config{Embedder: other}, nil); !errors.Is(err, embed.ErrMismatch) {
			t.Fatalf("reopened with another embedder: %v, want embed.ErrMismatch", err)
		}
	})
}

// TestOpenRetriever: OpenRetriever owns a database in a directory, which
// DocStore.Close closes.
func TestOpenRetriever(t *testing.T) {
	dir := t.TempDir()
	ds, _, err := OpenRetriever(dir, genkit.Init(ctx), "notes", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Index(ctx, corpus(), ds); err != nil {
		t.Fatal(err)
	}
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	ds, r, err := OpenRetriever(dir, genkit.Init(ctx), "notes", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	c, err := ds.Collection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(ctx); n != 4 || r.Name() != "mnemo/notes" {
		t.Fatalf("after reopen: %d documents, retriever %q", n, r.Name())
	}
	if _, _, err := OpenRetriever(t.TempDir(), nil, "notes", nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no Genkit: %v, want ErrInvalid", err)
	}
}

// TestModes: the retriever searches hybrid by default; RetrieverOptions'
// Mode chooses words alone (only documents holding a query word) or
// vectors alone, also as JSON.
func TestModes(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g, ds, r := setup(t, db)
		if err := Index(ctx, corpus(), ds); err != nil {
			t.Fatal(err)
		}
		for mode, want := range map[mnemo.Mode]int{"": 4, mnemo.ModeHybrid: 4, mnemo.ModeVector: 4, mnemo.ModeText: 1} {
			docs := retrieve(t, g, r, "bakery", &RetrieverOptions{K: 4, Mode: mode})
			if got := texts(docs); len(got) != want || got[0] != texts(corpus())[1] || score(docs[0]) <= 0 {
				t.Fatalf("mode %q: %q", mode, got)
			}
		}
		if docs := retrieve(t, g, r, "bakery", map[string]any{"k": 4, "mode": "text"}); len(docs) != 1 {
			t.Fatalf("mode as JSON: %d documents", len(docs))
		}
	})
}
