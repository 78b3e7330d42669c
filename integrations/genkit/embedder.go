package mnemo

import (
	"context"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo/memory/embed"
)

// Provider is the namespace of the retrievers and embedders this package
// defines: "mnemo/NAME".
const Provider = "mnemo"

// DefineEmbedder registers e as the Genkit embedder "mnemo/NAME"; a nil e
// means the offline hashing embedder (embed.NewHashing(0)). It embeds the
// text parts of each document, joined; a document with media parts is an
// error. Request options are not taken (a mnemo embedder has one model).
func DefineEmbedder(g *genkit.Genkit, name string, e embed.Embedder) (ai.Embedder, error) {
	if g == nil || name == "" {
		return nil, fmt.Errorf("%w: DefineEmbedder needs a Genkit and a name", ErrInvalid)
	}
	e, err := defaultEmbedder(e)
	if err != nil {
		return nil, err
	}
	opts := &ai.EmbedderOptions{
		Label:      "mnemo " + e.Identity(),
		Dimensions: e.Dimension(),
		Supports:   &ai.EmbedderSupports{Input: []string{"text"}, Multilingual: true},
	}
	return genkit.DefineEmbedder(g, api.NewName(Provider, name), opts, func(ctx context.Context, req *ai.EmbedRequest) (*ai.EmbedResponse, error) {
		if req.Options != nil {
			return nil, fmt.Errorf("%w: embedder options %T: a mnemo embedder takes none", ErrInvalid, req.Options)
		}
		texts := make([]string, len(req.Input))
		for i, d := range req.Input {
			var err error
			if texts[i], err = text(d); err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
		}
		vs, err := e.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		resp := &ai.EmbedResponse{Embeddings: make([]*ai.Embedding, len(vs))}
		for i, v := range vs {
			resp.Embeddings[i] = &ai.Embedding{Embedding: v}
		}
		return resp, nil
	}), nil
}

// ForeignEmbedder is a Genkit embedder as mnemo sees it: an embed.Embedder
// with the dimension that Genkit's interface does not report, and an
// identity. It is safe for concurrent use when the wrapped embedder is.
type ForeignEmbedder struct {
	e        ai.Embedder
	options  any
	dim      int
	identity string
}

var _ embed.Embedder = (*ForeignEmbedder)(nil)

// NewForeignEmbedder adapts a Genkit embedder to mnemo. dim is the length
// of its vectors (each result is checked against it); identity names the
// embedder and model, and is stored with each collection so that vectors
// of two identities are never mixed: empty means "genkit/NAME/DIM", NAME
// the embedder's registered name. options are passed in every request
// (nil for none).
func NewForeignEmbedder(e ai.Embedder, dim int, identity string, options any) (*ForeignEmbedder, error) {
	switch {
	case e == nil:
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalid)
	case dim < 1:
		return nil, fmt.Errorf("%w: dimension %d, want at least 1", ErrInvalid, dim)
	}
	if strings.TrimSpace(identity) == "" {
		identity = fmt.Sprintf("genkit/%s/%d", e.Name(), dim)
	}
	return &ForeignEmbedder{e: e, options: options, dim: dim, identity: identity}, nil
}

// Embed embeds each text as a text document and checks that there is one
// vector per text, each of Dimension values.
func (f *ForeignEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	docs := make([]*ai.Document, len(texts))
	for i, t := range texts {
		docs[i] = ai.DocumentFromText(t, nil)
	}
	resp, err := f.e.Embed(ctx, &ai.EmbedRequest{Input: docs, Options: f.options})
	if err != nil {
		return nil, err
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("%w: %d embeddings for %d texts", ErrEmbedding, len(resp.Embeddings), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, e := range resp.Embeddings {
		if e == nil || len(e.Embedding) != f.dim {
			n := 0
			if e != nil {
				n = len(e.Embedding)
			}
			return nil, fmt.Errorf("%w: text %d: a vector of %d values, want %d", ErrEmbedding, i, n, f.dim)
		}
		out[i] = e.Embedding
	}
	return out, nil
}

// Dimension returns the dimension given to NewForeignEmbedder.
func (f *ForeignEmbedder) Dimension() int { return f.dim }

// Identity returns the embedder's identity.
func (f *ForeignEmbedder) Identity() string { return f.identity }

func defaultEmbedder(e embed.Embedder) (embed.Embedder, error) {
	if e != nil {
		return e, nil
	}
	return embed.NewHashing(0)
}
