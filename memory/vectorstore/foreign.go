package vectorstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

// EmbedFunc embeds texts, one vector per text, in order: what a
// framework's embedder offers, as a function (a method value, or a
// closure that converts its vectors to float32). A Foreign calls it from
// every goroutine that uses it, so it is safe for concurrent use when the
// function is.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// QueryFunc embeds one query text, for embedders that embed queries
// differently from documents; the same concurrency rule as EmbedFunc's
// holds.
type QueryFunc func(ctx context.Context, text string) ([]float32, error)

// QueryEmbedder is implemented by embedders that embed a query otherwise
// than a document (some models prefix it with an instruction). A Store
// embeds the text of a Search with EmbedQuery when its embedder has it,
// and with Embed otherwise. Implementations are safe for concurrent use by
// multiple goroutines, as every embed.Embedder is.
type QueryEmbedder interface {
	// EmbedQuery returns the query's vector; the caller owns it.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Foreign is another framework's embedder as mnemo sees it: an
// embed.Embedder with the dimension and identity that the framework's
// interface does not report. Every vector it returns is checked: one per
// text, each of Dimension finite float32 values (ErrEmbedding otherwise).
// It is safe for concurrent use by multiple goroutines when the functions
// it wraps are.
type Foreign struct {
	embed    EmbedFunc
	query    QueryFunc // nil: queries go through embed
	dim      int
	identity string
}

var (
	_ embed.Embedder = (*Foreign)(nil)
	_ QueryEmbedder  = (*Foreign)(nil)
)

// NewForeign adapts a framework's embedder, given as its embedding
// function, to mnemo. query, when not nil, embeds queries (see
// QueryEmbedder). dim is the length of its vectors; identity names the
// embedder and model, e.g. "openai/text-embedding-3-small/1536": it is
// stored with each collection, and vectors of two identities are never
// compared. A nil embed, a dimension below 1 or an empty identity is
// ErrInvalid.
func NewForeign(embed EmbedFunc, query QueryFunc, dim int, identity string) (*Foreign, error) {
	switch {
	case embed == nil:
		return nil, fmt.Errorf("%w: nil embedder", ErrInvalid)
	case dim < 1:
		return nil, fmt.Errorf("%w: dimension %d, want at least 1", ErrInvalid, dim)
	case strings.TrimSpace(identity) == "":
		return nil, fmt.Errorf("%w: empty embedder identity", ErrInvalid)
	}
	return &Foreign{embed: embed, query: query, dim: dim, identity: identity}, nil
}

// Embed embeds texts with the wrapped function and checks the vectors;
// the caller owns them.
func (f *Foreign) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := f.embed(ctx, texts)
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

// EmbedQuery embeds one query with the query function given to
// NewForeign (with Embed when there is none) and checks its vector.
func (f *Foreign) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if f.query == nil {
		vs, err := f.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	}
	v, err := f.query(ctx, text)
	if err != nil {
		return nil, err
	}
	if err := f.check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// Dimension returns the dimension given to NewForeign.
func (f *Foreign) Dimension() int { return f.dim }

// Identity returns the identity given to NewForeign.
func (f *Foreign) Identity() string { return f.identity }

// check reports a vector of the wrong length or with a value that is not
// a finite float32 (a zero vector is the caller's to judge).
func (f *Foreign) check(v []float32) error {
	return usable(mnemo.CollectionConfig{Dimension: f.dim, Metric: mnemo.Dot}, v)
}

// DefaultEmbedder returns e, or when e is nil the offline default, the
// hashing embedder of the default dimension (what embed.NewHashing(0)
// returns), which matches words, not meaning.
func DefaultEmbedder(e embed.Embedder) (embed.Embedder, error) {
	if e != nil {
		return e, nil
	}
	return embed.NewHashing(0)
}

// AsEmbedder returns the mnemo embedder behind a framework's embedder e
// passed for one call (nil for none): e itself when it is an
// embed.Embedder (a Foreign, or a framework adapter of a mnemo embedder),
// and ErrNoIdentity otherwise, since a collection must know what made its
// vectors.
func AsEmbedder(e any) (embed.Embedder, error) {
	switch m := e.(type) {
	case nil:
		return nil, nil
	case embed.Embedder:
		return m, nil
	}
	return nil, fmt.Errorf("%w: %T (wrap it with its dimension and identity: NewForeignEmbedder, NewForeign)", ErrNoIdentity, e)
}
