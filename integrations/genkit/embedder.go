package mnemo

import (
	"context"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
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
	e, err := vectorstore.DefaultEmbedder(e)
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
// (a vectorstore.Foreign) with the dimension that Genkit's interface does
// not report, and an identity. It is safe for concurrent use when the
// wrapped embedder is.
type ForeignEmbedder struct {
	*vectorstore.Foreign
}

var _ embed.Embedder = (*ForeignEmbedder)(nil)

// NewForeignEmbedder adapts a Genkit embedder to mnemo. dim is the length
// of its vectors (each result is checked against it); identity names the
// embedder and model, and is stored with each collection so that vectors
// of two identities are never mixed: empty means "genkit/NAME/DIM", NAME
// the embedder's registered name. options are passed in every request
// (nil for none).
func NewForeignEmbedder(e ai.Embedder, dim int, identity string, options any) (*ForeignEmbedder, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalid)
	}
	if strings.TrimSpace(identity) == "" {
		identity = fmt.Sprintf("genkit/%s/%d", e.Name(), dim)
	}
	embedTexts := func(ctx context.Context, texts []string) ([][]float32, error) {
		docs := make([]*ai.Document, len(texts))
		for i, t := range texts {
			docs[i] = ai.DocumentFromText(t, nil)
		}
		resp, err := e.Embed(ctx, &ai.EmbedRequest{Input: docs, Options: options})
		if err != nil || resp == nil {
			return nil, err
		}
		vs := make([][]float32, len(resp.Embeddings))
		for i, emb := range resp.Embeddings {
			if emb != nil { // a missing embedding is a vector of 0 values, refused
				vs[i] = emb.Embedding
			}
		}
		return vs, nil
	}
	f, err := vectorstore.NewForeign(embedTexts, nil, dim, identity)
	if err != nil {
		return nil, err
	}
	return &ForeignEmbedder{f}, nil
}
