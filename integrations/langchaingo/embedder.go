package mnemo

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
)

// Embedder is a mnemo embedder as langchaingo sees it: the embed.Embedder
// it holds, with langchaingo's EmbedDocuments and EmbedQuery, so a Store
// given it through vectorstores.WithEmbedder knows its dimension and
// identity. It is safe for concurrent use by multiple goroutines.
type Embedder struct {
	embed.Embedder
}

var (
	_ embeddings.Embedder = (*Embedder)(nil)
	_ embed.Embedder      = (*Embedder)(nil)
)

// NewEmbedder adapts e to langchaingo; a nil e means the offline hashing
// embedder (embed.NewHashing(0)).
func NewEmbedder(e embed.Embedder) (*Embedder, error) {
	e, err := vectorstore.DefaultEmbedder(e)
	if err != nil {
		return nil, err
	}
	return &Embedder{e}, nil
}

// EmbedDocuments returns one vector per text; the caller owns them.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return e.Embed(ctx, texts)
}

// EmbedQuery embeds one text.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("%w: %s returned %d vectors for one text", ErrEmbedding, e.Identity(), len(vs))
	}
	return vs[0], nil
}

// ForeignEmbedder is a langchaingo embedder as mnemo sees it: an
// embed.Embedder (a vectorstore.Foreign) with the dimension and identity
// that langchaingo's interface does not report, which embeds queries with
// the wrapped EmbedQuery. It implements embeddings.Embedder too, so it can
// be passed to vectorstores.WithEmbedder. It is safe for concurrent use
// when the wrapped embedder is.
type ForeignEmbedder struct {
	*vectorstore.Foreign
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
	if e == nil {
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalid)
	}
	f, err := vectorstore.NewForeign(e.EmbedDocuments, e.EmbedQuery, dim, identity)
	if err != nil {
		return nil, err
	}
	return &ForeignEmbedder{f}, nil
}

// EmbedDocuments forwards to the wrapped embedder, checking the vectors as
// Embed does.
func (f *ForeignEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return f.Embed(ctx, texts)
}
