package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

// embedderNames lists what --embedder accepts.
const embedderNames = "hashing"

// newEmbedder returns the embedder --embedder names, with its default
// options: the one a new collection is made with.
func newEmbedder(name string) (embed.Embedder, error) {
	if strings.ToLower(name) != "hashing" {
		return nil, fmt.Errorf("unknown embedder %q (want %s)", name, embedderNames)
	}
	return embed.NewHashing(0)
}

// collectionEmbedder returns the embedder that made the vectors of a
// collection with config cfg, rebuilt from the identity the collection
// records (any version of the offline hashing embedder), or an error
// wrapping errNoEmbedder (none recorded) or errForeignEmbedder (one the
// command line cannot rebuild, such as an HTTP model's). Only the
// embedder the identity names is returned: vectors of any other live in
// another space.
func collectionEmbedder(cfg mnemo.CollectionConfig) (embed.Embedder, error) {
	if cfg.Embedder == "" {
		return nil, errNoEmbedder
	}
	if h, ok := embed.Offline(cfg.Embedder); ok && h.Dimension() == cfg.Dimension {
		return h, nil
	}
	return nil, fmt.Errorf("%w: %s", errForeignEmbedder, cfg.Embedder)
}

// embedOne embeds text with e. A text that embeds to the zero vector (it
// has nothing the embedder counts, such as no letters or digits) is an
// error: it has no direction to search by.
func embedOne(ctx context.Context, e embed.Embedder, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("the embedder returned %d vectors for one text", len(vs))
	}
	if embed.IsZero(vs[0]) {
		return nil, errZeroEmbedding
	}
	return vs[0], nil
}

// embedTexts embeds texts with e: in one call, or when that fails one by
// one, so that each error is its own text's. errs[i] is the error of
// texts[i], errZeroEmbedding for a text that embeds to the zero vector.
func embedTexts(ctx context.Context, e embed.Embedder, texts []string) (vecs [][]float32, errs []error) {
	errs = make([]error, len(texts))
	vecs, err := e.Embed(ctx, texts)
	if err != nil || len(vecs) != len(texts) {
		vecs = make([][]float32, len(texts))
		for i, t := range texts {
			vecs[i], errs[i] = embedOne(ctx, e, t)
		}
		return vecs, errs
	}
	for i, v := range vecs {
		if embed.IsZero(v) {
			errs[i] = errZeroEmbedding
		}
	}
	return vecs, errs
}

// describeEmbedder names the embedder a collection records, for messages.
func describeEmbedder(identity string) string {
	if identity == "" {
		return "no recorded embedder"
	}
	return "the embedder " + identity
}
