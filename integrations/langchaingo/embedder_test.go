package mnemo

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

func TestEmbedderToLangchaingo(t *testing.T) {
	h, _ := embed.NewHashing(64)
	e, err := NewEmbedder(h)
	if err != nil {
		t.Fatal(err)
	}
	var lc embeddings.Embedder = e
	want, _ := h.Embed(ctx, []string{"Paul works at Google", "Anna bakes bread"})
	got, err := lc.EmbedDocuments(ctx, []string{"Paul works at Google", "Anna bakes bread"})
	if err != nil || len(got) != 2 || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("EmbedDocuments differs from the hashing embedder (%v)", err)
	}
	q, err := lc.EmbedQuery(ctx, "Anna bakes bread")
	if err != nil || !slices.Equal(q, want[1]) {
		t.Fatalf("EmbedQuery differs from the hashing embedder (%v)", err)
	}
	if e.Dimension() != 64 || e.Identity() != h.Identity() {
		t.Fatalf("dimension %d, identity %q", e.Dimension(), e.Identity())
	}
	def, _ := NewEmbedder(nil)
	if h0, _ := embed.NewHashing(0); def.Identity() != h0.Identity() {
		t.Fatalf("default identity %q", def.Identity())
	}
}

// client is a langchaingo embedding client that returns what it is told.
type client struct {
	vectors [][]float32
	err     error
}

func (c client) CreateEmbedding(_ context.Context, texts []string) ([][]float32, error) {
	return c.vectors, c.err
}

func TestForeignEmbedder(t *testing.T) {
	theirs, _ := embeddings.NewEmbedder(client{vectors: [][]float32{{1, 0, 0}, {0, 1, 0}}})
	f, err := NewForeignEmbedder(theirs, 3, "test/model/3")
	if err != nil {
		t.Fatal(err)
	}
	var m embed.Embedder = f
	vs, err := m.Embed(ctx, []string{"a", "b"})
	if err != nil || len(vs) != 2 || !slices.Equal(vs[1], []float32{0, 1, 0}) {
		t.Fatalf("Embed = %v, %v", vs, err)
	}
	if m.Dimension() != 3 || m.Identity() != "test/model/3" {
		t.Fatalf("dimension %d, identity %q", m.Dimension(), m.Identity())
	}
	if _, err := m.Embed(ctx, []string{"a"}); !errors.Is(err, ErrEmbedding) {
		t.Fatalf("2 vectors for 1 text: %v, want ErrEmbedding", err)
	}
	short, _ := embeddings.NewEmbedder(client{vectors: [][]float32{{1, 0}}})
	fs, _ := NewForeignEmbedder(short, 3, "test/model/3")
	if _, err := fs.Embed(ctx, []string{"a"}); !errors.Is(err, ErrEmbedding) {
		t.Fatalf("a short vector: %v, want ErrEmbedding", err)
	}
	if _, err := fs.EmbedQuery(ctx, "a"); !errors.Is(err, ErrEmbedding) {
		t.Fatalf("a short query vector: %v, want ErrEmbedding", err)
	}
	boom := errors.New("boom")
	failing, _ := embeddings.NewEmbedder(client{err: boom})
	ff, _ := NewForeignEmbedder(failing, 3, "test/model/3")
	if _, err := ff.Embed(ctx, []string{"a"}); !errors.Is(err, boom) {
		t.Fatalf("failing embedder: %v", err)
	}
	for _, tt := range []struct {
		e   embeddings.Embedder
		dim int
		id  string
	}{{nil, 3, "x"}, {theirs, 0, "x"}, {theirs, 3, " "}} {
		if _, err := NewForeignEmbedder(tt.e, tt.dim, tt.id); !errors.Is(err, ErrInvalid) {
			t.Fatalf("NewForeignEmbedder(%v, %d, %q): %v, want ErrInvalid", tt.e, tt.dim, tt.id, err)
		}
	}
}

func TestForeignEmbedderStore(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		// A langchaingo embedder (here the hashing one behind langchaingo's
		// own EmbedderImpl) as a store's embedder.
		h, _ := embed.NewHashing(0)
		theirs, _ := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(h.Embed))
		f, err := NewForeignEmbedder(theirs, h.Dimension(), "lc/hashing/384")
		if err != nil {
			t.Fatal(err)
		}
		s := newStore(t, db, &Options{Embedder: f})
		add(t, s, corpus)
		docs, err := s.SimilaritySearch(ctx, "Paul likes hiking", 1)
		if err != nil || len(docs) != 1 || docs[0].PageContent != corpus[3].PageContent {
			t.Fatalf("%q, %v", contents(docs), err)
		}
		c, err := db.Collection(ctx, DefaultCollection)
		if err != nil || c.Config().Embedder != "lc/hashing/384" {
			t.Fatalf("collection embedder: %v", err)
		}
	})
}
