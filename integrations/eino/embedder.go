package mnemo

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/cloudwego/eino/components/embedding"

	"github.com/mnemodb/mnemo/memory/embed"
)

// Embedder is a mnemo embedder as Eino sees it: it implements
// embedding.Embedder (float64 vectors), and embed.Embedder too, so an
// Indexer or Retriever given it through WithEmbedding knows its dimension
// and identity. It is safe for concurrent use by multiple goroutines.
type Embedder struct {
	e embed.Embedder
}

var (
	_ embedding.Embedder = (*Embedder)(nil)
	_ embed.Embedder     = (*Embedder)(nil)
)

// NewEmbedder adapts e to Eino; a nil e means the offline hashing embedder
// (embed.NewHashing(0)).
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

// EmbedStrings returns one vector per text, widened to float64; the caller
// owns them. It takes no options: a mnemo embedder has one model, so
// embedding.WithModel is an error.
func (e *Embedder) EmbedStrings(ctx context.Context, texts []string, opts ...embedding.Option) ([][]float64, error) {
	if o := embedding.GetCommonOptions(nil, opts...); o.Model != nil {
		return nil, fmt.Errorf("%w: model %q: the embedder is %s", ErrInvalid, *o.Model, e.e.Identity())
	}
	vs, err := e.e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(vs))
	for i, v := range vs {
		out[i] = make([]float64, len(v))
		for j, x := range v {
			out[i][j] = float64(x)
		}
	}
	return out, nil
}

// GetType names the component in Eino's callbacks.
func (e *Embedder) GetType() string { return "Mnemo" }

// Embed implements embed.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.e.Embed(ctx, texts)
}

// Dimension returns the wrapped embedder's dimension.
func (e *Embedder) Dimension() int { return e.e.Dimension() }

// Identity returns the wrapped embedder's identity.
func (e *Embedder) Identity() string { return e.e.Identity() }

// ForeignEmbedder is an Eino embedder as mnemo sees it: an embed.Embedder
// with the dimension and identity that Eino's interface does not report,
// narrowing its float64 vectors to float32. It implements
// embedding.Embedder too (forwarding), so it can be passed to
// WithEmbedding. It is safe for concurrent use when the wrapped embedder
// is.
type ForeignEmbedder struct {
	e        embedding.Embedder
	dim      int
	identity string
}

var (
	_ embedding.Embedder = (*ForeignEmbedder)(nil)
	_ embed.Embedder     = (*ForeignEmbedder)(nil)
)

// NewForeignEmbedder adapts an Eino embedder to mnemo. dim is the length
// of its vectors (each result is checked against it); identity names the
// embedder and model, e.g. "ark/doubao-embedding/2560": mnemo stores it
// with each collection and refuses to mix vectors of two identities.
func NewForeignEmbedder(e embedding.Embedder, dim int, identity string) (*ForeignEmbedder, error) {
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

// Embed embeds texts with EmbedStrings and narrows the vectors to float32,
// checking that there is one per text, each of Dimension values that fit
// a float32.
func (f *ForeignEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := f.e.EmbedStrings(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vs), len(texts))
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		if len(v) != f.dim {
			return nil, fmt.Errorf("%w: text %d: a vector of %d values, want %d", ErrEmbedding, i, len(v), f.dim)
		}
		out[i] = make([]float32, len(v))
		for j, x := range v {
			y := float32(x)
			if math.IsNaN(x) || math.IsInf(float64(y), 0) {
				return nil, fmt.Errorf("%w: text %d: value %d is %v", ErrEmbedding, i, j, x)
			}
			out[i][j] = y
		}
	}
	return out, nil
}

// Dimension returns the dimension given to NewForeignEmbedder.
func (f *ForeignEmbedder) Dimension() int { return f.dim }

// Identity returns the identity given to NewForeignEmbedder.
func (f *ForeignEmbedder) Identity() string { return f.identity }

// EmbedStrings forwards to the wrapped embedder.
func (f *ForeignEmbedder) EmbedStrings(ctx context.Context, texts []string, opts ...embedding.Option) ([][]float64, error) {
	return f.e.EmbedStrings(ctx, texts, opts...)
}

// asMnemo returns the mnemo embedder behind an Eino one passed with
// WithEmbedding.
func asMnemo(e embedding.Embedder) (embed.Embedder, error) {
	if m, ok := e.(embed.Embedder); ok {
		return m, nil
	}
	return nil, fmt.Errorf("%w: %T (wrap it with NewForeignEmbedder)", ErrNoIdentity, e)
}
