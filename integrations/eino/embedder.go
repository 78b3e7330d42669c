package mnemo

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/embedding"

	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
)

// Embedder is a mnemo embedder as Eino sees it: the embed.Embedder it
// holds, with Eino's EmbedStrings (float64 vectors), so an Indexer or
// Retriever given it through WithEmbedding knows its dimension and
// identity. It is safe for concurrent use by multiple goroutines.
type Embedder struct {
	embed.Embedder
}

var (
	_ embedding.Embedder = (*Embedder)(nil)
	_ embed.Embedder     = (*Embedder)(nil)
)

// NewEmbedder adapts e to Eino; a nil e means the offline hashing embedder
// (embed.NewHashing(0)).
func NewEmbedder(e embed.Embedder) (*Embedder, error) {
	e, err := vectorstore.DefaultEmbedder(e)
	if err != nil {
		return nil, err
	}
	return &Embedder{e}, nil
}

// EmbedStrings returns one vector per text, widened to float64; the caller
// owns them. It takes no options: a mnemo embedder has one model, so
// embedding.WithModel is an error.
func (e *Embedder) EmbedStrings(ctx context.Context, texts []string, opts ...embedding.Option) ([][]float64, error) {
	if o := embedding.GetCommonOptions(nil, opts...); o.Model != nil {
		return nil, fmt.Errorf("%w: model %q: the embedder is %s", ErrInvalid, *o.Model, e.Identity())
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	return convert[float64](vs), nil
}

// convert copies vectors into the other float type: widening is exact;
// narrowing keeps a NaN a NaN and makes a value beyond float32 an
// infinity, both of which vectorstore.Foreign refuses.
func convert[To, From float32 | float64](vs [][]From) [][]To {
	out := make([][]To, len(vs))
	for i, v := range vs {
		out[i] = make([]To, len(v))
		for j, x := range v {
			out[i][j] = To(x)
		}
	}
	return out
}

// GetType names the component in Eino's callbacks.
func (e *Embedder) GetType() string { return "Mnemo" }

// ForeignEmbedder is an Eino embedder as mnemo sees it: an embed.Embedder
// (a vectorstore.Foreign) with the dimension and identity that Eino's
// interface does not report, narrowing its float64 vectors to float32.
// It implements embedding.Embedder too (forwarding), so it can be passed
// to WithEmbedding. It is safe for concurrent use when the wrapped
// embedder is.
type ForeignEmbedder struct {
	*vectorstore.Foreign
	e embedding.Embedder
}

var (
	_ embedding.Embedder = (*ForeignEmbedder)(nil)
	_ embed.Embedder     = (*ForeignEmbedder)(nil)
)

// NewForeignEmbedder adapts an Eino embedder to mnemo. dim is the length
// of its vectors (each result is checked against it, and every value must
// fit a float32); identity names the embedder and model, e.g.
// "ark/doubao-embedding/2560": mnemo stores it with each collection and
// refuses to mix vectors of two identities.
func NewForeignEmbedder(e embedding.Embedder, dim int, identity string) (*ForeignEmbedder, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalid)
	}
	narrow := func(ctx context.Context, texts []string) ([][]float32, error) {
		vs, err := e.EmbedStrings(ctx, texts)
		if err != nil {
			return nil, err
		}
		return convert[float32](vs), nil
	}
	f, err := vectorstore.NewForeign(narrow, nil, dim, identity)
	if err != nil {
		return nil, err
	}
	return &ForeignEmbedder{Foreign: f, e: e}, nil
}

// EmbedStrings forwards to the wrapped embedder.
func (f *ForeignEmbedder) EmbedStrings(ctx context.Context, texts []string, opts ...embedding.Option) ([][]float64, error) {
	return f.e.EmbedStrings(ctx, texts, opts...)
}
