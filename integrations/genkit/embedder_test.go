package mnemo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

func TestDefineEmbedder(t *testing.T) {
	g := genkit.Init(ctx)
	h, _ := embed.NewHashing(64)
	e, err := DefineEmbedder(g, "hashing", h)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "mnemo/hashing" || genkit.LookupEmbedder(g, "mnemo/hashing") == nil {
		t.Fatalf("embedder %q not registered", e.Name())
	}
	resp, err := genkit.Embed(ctx, g, ai.WithEmbedder(e), ai.WithTextDocs("Paul works at Google", "Anna bakes bread"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := h.Embed(ctx, []string{"Paul works at Google", "Anna bakes bread"})
	if len(resp.Embeddings) != 2 || !slices.Equal(resp.Embeddings[0].Embedding, want[0]) || !slices.Equal(resp.Embeddings[1].Embedding, want[1]) {
		t.Fatalf("embeddings differ from the hashing embedder")
	}
	if _, err := genkit.Embed(ctx, g, ai.WithEmbedder(e), ai.WithTextDocs("x"), ai.WithConfig(map[string]any{"model": "m"})); !errors.Is(err, ErrInvalid) {
		t.Fatalf("options: %v, want ErrInvalid", err)
	}
	if _, err := DefineEmbedder(g, "", h); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no name: %v, want ErrInvalid", err)
	}
}

func TestForeignEmbedder(t *testing.T) {
	g := genkit.Init(ctx)
	h, _ := embed.NewHashing(0)
	theirs, err := DefineEmbedder(g, "h", h) // a Genkit embedder, as any plugin's
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewForeignEmbedder(theirs, h.Dimension(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantID := fmt.Sprintf("genkit/mnemo/h/%d", h.Dimension())
	if f.Identity() != wantID || f.Dimension() != h.Dimension() {
		t.Fatalf("identity %q, dimension %d", f.Identity(), f.Dimension())
	}
	vs, err := f.Embed(ctx, []string{"Paul works at Google"})
	want, _ := h.Embed(ctx, []string{"Paul works at Google"})
	if err != nil || !slices.Equal(vs[0], want[0]) {
		t.Fatalf("Embed differs (%v)", err)
	}
	// As a DocStore's embedder: its identity goes with the collection.
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		g := genkit.Init(ctx)
		ds, r, err := DefineRetriever(ctx, g, db, "notes", &Config{Embedder: f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		Index(ctx, corpus(), ds)
		if got := texts(retrieve(t, g, r, "Anna bakery", &RetrieverOptions{K: 1})); got[0] != texts(corpus())[1] {
			t.Fatalf("got %q", got)
		}
		if c, err := ds.Collection(ctx); err != nil || c.Config().Embedder != wantID {
			t.Fatalf("collection embedder: %v", err)
		}
	})
	// The wrong dimension, or a failing embedder, is an error.
	short, _ := NewForeignEmbedder(theirs, 128, "x", nil)
	if _, err := short.Embed(ctx, []string{"Paul"}); !errors.Is(err, ErrEmbedding) {
		t.Fatalf("wrong dimension: %v, want ErrEmbedding", err)
	}
	boom := errors.New("boom")
	failing := ai.NewEmbedder("test/failing", nil, func(context.Context, *ai.EmbedRequest) (*ai.EmbedResponse, error) { return nil, boom })
	ff, _ := NewForeignEmbedder(failing, 3, "x", nil)
	if _, err := ff.Embed(ctx, []string{"a"}); !errors.Is(err, boom) {
		t.Fatalf("failing embedder: %v", err)
	}
	none := ai.NewEmbedder("test/none", nil, func(context.Context, *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		return &ai.EmbedResponse{}, nil
	})
	fn, _ := NewForeignEmbedder(none, 3, "x", nil)
	if _, err := fn.Embed(ctx, []string{"a"}); !errors.Is(err, ErrEmbedding) {
		t.Fatalf("no embeddings: %v, want ErrEmbedding", err)
	}
	if _, err := NewForeignEmbedder(nil, 3, "x", nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil embedder: %v", err)
	}
	if _, err := NewForeignEmbedder(theirs, 0, "x", nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("dimension 0: %v", err)
	}
}
