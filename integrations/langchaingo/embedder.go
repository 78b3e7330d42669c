package mnemo

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/mnemodb/mnemo/memory/embed"
)

// Embedder is a mnemo embedder as langchaingo sees it: it implements
// embeddings.Embedder, and embed.Embedder too, so a Store given it through
// vectorstores.WithEmbedder knows its dimension and identity. It is safe
// for concurrent use by multiple goroutines.
type Embedder struct {
	e embed.Embedder
}

var (
	_ embeddings.Embedder = (*Embedder)(nil)
	_ embed.Embedder      = (*Embedder)(nil)
)

// NewEmbedder adapts e to langchaingo; a nil e means the offline hashing
// embedder (embed.NewHashing(0)).
func NewEmbedder(e embed.Embedder) (*Embedder, error) {
	if e == nil {
		h, err := embed.NewHashing(0)
		if err != nil {
			return nil, err
		}
		e = h
	}
	return &Embedder{e: e}, nil
}

// EmbedDocuments returns one vector per text; the caller owns them.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return e.e.Embed(ctx, texts)
}

// EmbedQuery embeds one text.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// Embed implements embed.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.e.Embed(ctx, texts)
}

// Dimension returns the wrapped embedder's dimension.
func (e *Embedder) Dimension() int { return e.e.Dimension() }

// Identity returns the wrapped embedder's identity.
func (e *Embedder) Identity() string { return e.e.Identity() }

// ForeignEmbedder is a langchaingo embedder as mnemo sees it: an
// embed.Embedder with the dimension and identity that langchaingo's
// interface does not report. It implements embeddings.Embedder too
// (forwarding), so it can be passed to vectorstores.WithEmbedder. It is
// safe for concurrent use when the wrapped embedder is.
type ForeignEmbedder struct {
	e        embeddings.Embedder
	dim      int
	identity string
}

var (
	_ embeddings.Embedder = (*ForeignEmbedder)(nil)
	_ embed.Embedder      = (*ForeignEmbedder)(nil)
)

// NewForeignEmbedder adapts a langchaingo embedder to mnemo. dim is the
// length of its vectors (each result is checked against it); identity
// names the embedder and model, e.g. "openai/text-embedding-3-small/1536":
// mnemo stores it with each collection and refuses to mix vectors of two
// identities.
func NewForeignEmbedder(e embeddings.Embedder, dim int, identity string) (*ForeignEmbedder, error) {
	switch {
	case e == nil:
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalid)
	case dim < 1:
		return nil, fmt.Errorf("%w: dimension %d, want at least 1", ErrInvalid, dim)
	case strings.TrimSpace(identity) == "":
		return nil, fmt.Errorf("%w: empty embedder identity", ErrInvalid)
	}
	return &ForeignEmbedder{e: e, dim: dim, identity: identity}, nil
}

// Embed embeds texts with EmbedDocuments and checks that there is one
// vector per text, each of Dimension values.
func (f *ForeignEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := f.e.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vs), len(texts))
	}
	for i, v := range vs {
		if err := f.check(v); err != nil {
			return nil, fmt.Errorf("text %d: %w", i, err)
		}
	}
	return vs, nil
}

func (f *ForeignEmbedder) check(v []float32) error {
	if len(v) != f.dim {
		return fmt.Errorf("%w: a vector of %d values, want %d", ErrEmbedding, len(v), f.dim)
	}
	return nil
}

// Dimension returns the dimension given to NewForeignEmbedder.
func (f *ForeignEmbedder) Dimension() int { return f.dim }

// Identity returns the identity given to NewForeignEmbedder.
func (f *ForeignEmbedder) Identity() string { return f.identity }

// EmbedDocuments forwards to the wrapped embedder, checking the vectors as
// Embed does.
func (f *ForeignEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return f.Embed(ctx, texts)
}

// EmbedQuery forwards to the wrapped embedder's EmbedQuery and checks the
// vector's dimension.
func (f *ForeignEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := f.e.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	if err := f.check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// asMnemo returns the mnemo embedder behind a langchaingo one passed with
// vectorstores.WithEmbedder.
func asMnemo(e embeddings.Embedder) (embed.Embedder, error) {
	if m, ok := e.(embed.Embedder); ok {
		return m, nil
	}
	return nil, fmt.Errorf("%w: %T (wrap it with NewForeignEmbedder)", ErrNoIdentity, e)
}
