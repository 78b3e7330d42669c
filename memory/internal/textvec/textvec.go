// Package textvec is what the memory adapters share between a text and an
// engine collection: the default embedder, embedding one text with the
// checks every adapter makes (empty text, invalid UTF-8, nothing to
// embed), opening a collection and checking the embedder its vectors were
// made with, and validating an optional score or distance cutoff.
//
// It is internal: each adapter reports errors with its own sentinels, and
// the embedder mismatch with embed.ErrMismatch.
package textvec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// Space is an embedder as an adapter uses it: one text at a time, bad text
// reported with the adapter's own sentinels, and collections whose vectors
// it made. A Space is safe for concurrent use by multiple goroutines when
// its embedder is (every embed.Embedder is).
type Space struct {
	emb     embed.Embedder
	empty   error // wrapped for empty text and text with nothing to embed
	invalid error // wrapped for invalid UTF-8
}

// New returns a Space embedding with e, or with the offline default
// (embed.NewHashing(0)) when e is nil. empty and invalid are the
// adapter's sentinels for empty text and for invalid UTF-8.
func New(e embed.Embedder, empty, invalid error) (*Space, error) {
	if e == nil {
		h, err := embed.NewHashing(0)
		if err != nil {
			return nil, err
		}
		e = h
	}
	return &Space{emb: e, empty: empty, invalid: invalid}, nil
}

// Embedder returns the embedder.
func (s *Space) Embedder() embed.Embedder { return s.emb }

// Vector validates and embeds one text; what names it in errors ("query",
// "fact"). Empty or whitespace-only text, and text the embedder maps to
// the zero vector, wrap the empty sentinel (symbol-only text such as "?"
// embeds with the default embedder);
// invalid UTF-8 wraps the invalid one. The caller owns the vector.
func (s *Space) Vector(ctx context.Context, what, text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w: %s is empty", s.empty, what)
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("%w: %s is not valid UTF-8", s.invalid, what)
	}
	vs, err := s.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if embed.IsZero(vs[0]) {
		return nil, fmt.Errorf("%w: %s has nothing to embed (the embedder made the zero vector)", s.empty, what)
	}
	return vs[0], nil
}

// Collection opens the cosine collection name in db for this Space's
// vectors, creating it if needed. A collection made by another embedder
// is an error wrapping embed.ErrMismatch; one that differs otherwise
// (another metric, say) wraps engine.ErrCollectionExists.
func (s *Space) Collection(ctx context.Context, db *engine.DB, name string) (*engine.Collection, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", s.invalid)
	}
	id := s.emb.Identity()
	cfg := engine.CollectionConfig{Dimension: s.emb.Dimension(), Metric: engine.Cosine, Embedder: id}
	c, err := db.CreateCollection(ctx, name, cfg)
	if errors.Is(err, engine.ErrCollectionExists) {
		if old, gerr := db.Collection(name); gerr == nil && old.Config().Embedder != id {
			return nil, fmt.Errorf("%w: %q was built with %q, opened with %q", embed.ErrMismatch, name, old.Config().Embedder, id)
		}
	}
	return c, err
}

// CheckCutoff validates an optional cutoff named name: nil is valid; a
// set one must be finite and within [lo, hi]. A bad one wraps invalid.
func CheckCutoff(invalid error, name string, c *float32, lo, hi float64) error {
	if c == nil {
		return nil
	}
	v := float64(*c)
	if math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		want := "a finite number"
		if !math.IsInf(lo, -1) || !math.IsInf(hi, 1) {
			want = fmt.Sprintf("%g..%g", lo, hi)
		}
		return fmt.Errorf("%w: %s %v, want %s", invalid, name, *c, want)
	}
	return nil
}
