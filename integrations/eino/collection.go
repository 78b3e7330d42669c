package mnemo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// DefaultCollection is the collection of an Indexer or Retriever whose
// config names none.
const DefaultCollection = "eino"

// defaultEmbedder returns e, or the offline hashing embedder when e is nil.
func defaultEmbedder(e embed.Embedder) (embed.Embedder, error) {
	if e != nil {
		return e, nil
	}
	return embed.NewHashing(0)
}

// collection returns the collection name in db for vectors of e, creating
// it when create is set; a missing one is nil without create. One made by
// another embedder is an error wrapping embed.ErrMismatch.
func collection(ctx context.Context, db *engine.DB, name string, e embed.Embedder, create bool) (*engine.Collection, error) {
	id := e.Identity()
	c, err := db.Collection(name)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		if !create {
			return nil, nil
		}
		cfg := mnemo.CollectionConfig{Dimension: e.Dimension(), Metric: mnemo.Cosine, Embedder: id}
		c, err = db.CreateCollection(ctx, name, cfg)
	}
	if err != nil {
		return nil, err
	}
	if got := c.Config().Embedder; got != id {
		return nil, fmt.Errorf("%w: collection %q was built with %q, used with %q", embed.ErrMismatch, name, got, id)
	}
	return c, nil
}

// embedTexts checks texts and embeds them; what names them in errors.
func embedTexts(ctx context.Context, e embed.Embedder, what string, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("%s %d: %w: no text", what, i, ErrEmpty)
		}
		if !utf8.ValidString(t) {
			return nil, fmt.Errorf("%s %d: %w: text is not valid UTF-8", what, i, ErrInvalid)
		}
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vs), len(texts))
	}
	for i, v := range vs {
		if embed.IsZero(v) {
			return nil, fmt.Errorf("%s %d: %w: nothing to embed (the embedder maps it to the zero vector)", what, i, ErrEmpty)
		}
	}
	return vs, nil
}
