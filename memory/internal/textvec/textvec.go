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
	"sync"
	"unicode/utf8"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/backend"
	"github.com/mnemodb/mnemo/memory/embed"
)

// Space is an embedder as an adapter uses it: one text at a time, bad text
// reported with the adapter's own sentinels, and collections whose vectors
// it made. A Space is safe for concurrent use by multiple goroutines when
// its embedder is (every embed.Embedder is).
type Space struct {
	emb     embed.Embedder
	dflt    bool // emb is the default: it may follow an older offline embedder's collection
	mu      sync.Mutex
	next    map[backend.Collection]int64 // next position per collection (Place)
	empty   error                        // wrapped for empty text and text with nothing to embed
	invalid error                        // wrapped for invalid UTF-8
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
		return &Space{emb: h, dflt: true, empty: empty, invalid: invalid}, nil
	}
	return &Space{emb: e, empty: empty, invalid: invalid}, nil
}

// Embedder returns the embedder.
func (s *Space) Embedder() embed.Embedder {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emb
}

// Vector validates and embeds one text; what names it in errors ("query",
// "fact"). Empty or whitespace-only text, and text the embedder maps to
// the zero vector (no letters or digits), wrap the empty sentinel;
// invalid UTF-8 wraps the invalid one. The caller owns the vector.
func (s *Space) Vector(ctx context.Context, what, text string) ([]float32, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w: %s is empty", s.empty, what)
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("%w: %s is not valid UTF-8", s.invalid, what)
	}
	vs, err := s.Embedder().Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if embed.IsZero(vs[0]) {
		return nil, fmt.Errorf("%w: %s has nothing to embed (no letters or digits)", s.empty, what)
	}
	return vs[0], nil
}

// Collection opens the cosine collection name in db (any backend) for this Space's
// vectors, creating it if needed. A collection made by another embedder
// is an error wrapping embed.ErrMismatch; one that differs otherwise
// (another metric, say) wraps engine.ErrCollectionExists.
func (s *Space) Collection(ctx context.Context, db backend.Store, name string) (backend.Collection, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", s.invalid)
	}
	old, err := db.Collection(ctx, name)
	if err != nil {
		old = nil // none yet (or unreadable: CreateCollection says which)
	}
	if old != nil && s.dflt {
		// A memory stored with an older version of the offline default
		// keeps being searched with that version.
		if h, ok := embed.Offline(old.Config().Embedder); ok && h.Identity() != s.emb.Identity() {
			s.mu.Lock()
			s.emb, s.dflt = h, false
			s.mu.Unlock()
		}
	}
	emb := s.Embedder()
	id := emb.Identity()
	cfg := engine.CollectionConfig{Dimension: emb.Dimension(), Metric: engine.Cosine, Embedder: id}
	if old != nil {
		cfg.Text = old.Config().Text // an existing collection keeps its full-text settings
	}
	c, err := db.CreateCollection(ctx, name, cfg)
	if errors.Is(err, engine.ErrCollectionExists) {
		if old == nil { // created by someone else since the lookup
			old, _ = db.Collection(ctx, name)
		}
		if old != nil && old.Config().Embedder != id {
			return nil, fmt.Errorf("%w: %q was built with %q, opened with %q", embed.ErrMismatch, name, old.Config().Embedder, id)
		}
	}
	return c, err
}

// OpenStore opens the store of an adapter's Open(dir, ...): the engine
// database in dir, owned by the returned Store, or InMemoryStore's when
// dir is empty.
func OpenStore(dir string) (backend.Store, error) {
	if dir == "" {
		return InMemoryStore()
	}
	return backend.OpenEmbedded(dir, nil)
}

// InMemoryStore opens the store of an adapter's Open(""): an in-memory
// engine database. The adapters' tests point it at a PostgreSQL server
// (MNEMO_MEMORY_BACKEND=postgres) to run the same behaviours there.
var InMemoryStore = func() (backend.Store, error) {
	return backend.OpenEmbedded("", &engine.Options{InMemory: true})
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

// PosField is the metadata field in which the adapters keep each memory's
// place in the order memories were stored, so a search can lift the
// memories stored just before and after a match (engine.Neighbors). It is
// stripped from the metadata the adapters return.
const PosField = "mnemo.pos"

// DefaultNeighborWeight is the share of a match's score that the memories
// stored within DefaultNeighborWindow places of it get by default.
// Measured on LoCoMo conversations (evidence recall@10, hybrid with the
// offline embedder at vector weight 0.3, 100 candidates a side): 0.605
// without; weight 0.3, 0.5, 0.7 at window 1: 0.688, 0.704, 0.710; at
// window 2: 0.726, 0.740, 0.730.
const (
	DefaultNeighborWeight = 0.5
	DefaultNeighborWindow = 2
)

// Retrieval is how an adapter searches: the mode (empty: hybrid when the
// collection has a full-text index) and the neighbour weight (nil: the
// default; 0: off).
type Retrieval struct {
	Mode      engine.Mode
	Neighbors *float32
}

// Check validates r; a bad one wraps invalid.
func (r Retrieval) Check(invalid error) error {
	switch r.Mode {
	case engine.ModeAuto, engine.ModeHybrid, engine.ModeVector, engine.ModeText:
	default:
		return fmt.Errorf("%w: mode %q (want hybrid, vector or text)", invalid, r.Mode)
	}
	return CheckCutoff(invalid, "neighbour weight", r.Neighbors, 0, 1)
}

// Search runs text as a query over c: the query's vector and words fused
// (hybrid) unless r says otherwise, with neighbour spreading over
// PosField, k hits, the filter and the minimum similarity applied (nil:
// none). Text with nothing to embed is the empty sentinel (see Vector).
func (s *Space) Search(ctx context.Context, c backend.Collection, r Retrieval, text string, k int, filter *engine.Filter, minSim *float32) ([]engine.Hit, error) {
	q := engine.Query{Text: text, K: k, Filter: filter, MinSimilarity: minSim, Mode: r.Mode}
	hasText := !c.Config().Text.Disabled
	switch {
	case !hasText || q.Mode == engine.ModeVector:
		q.Mode, q.Text = engine.ModeVector, ""
	case q.Mode == engine.ModeAuto:
		q.Mode = engine.ModeHybrid
	}
	if q.Mode != engine.ModeText || minSim != nil {
		v, err := s.Vector(ctx, "query", text)
		if err != nil {
			return nil, err
		}
		q.Vector = v
	} else if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w: query is empty", s.empty)
	}
	w := float32(DefaultNeighborWeight)
	if r.Neighbors != nil {
		w = *r.Neighbors
	}
	if w > 0 && q.Mode != engine.ModeVector {
		q.Neighbors = &engine.Neighbors{Position: PosField, Weight: float64(w), Window: DefaultNeighborWindow}
	}
	hits, err := c.Query(ctx, q)
	for i := range hits {
		delete(hits[i].Record.Metadata, PosField)
	}
	return hits, err
}

// Place returns the positions of n memories about to be stored in c, in
// order: one more than the largest stored (found by a scan the first time
// a collection is asked about). Positions only order memories; a gap or a
// repeat after a failed write costs nothing but a neighbour.
func (s *Space) Place(ctx context.Context, c backend.Collection, n int) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == nil {
		s.next = map[backend.Collection]int64{}
	}
	next, ok := s.next[c]
	if !ok {
		after := ""
		for {
			page, more, err := c.Scan(ctx, after, 1000)
			if err != nil {
				return 0, err
			}
			for _, r := range page {
				if p, ok := r.Metadata[PosField].(float64); ok && p >= float64(next) && p < 1<<53 {
					next = int64(p) + 1
				}
			}
			if more == "" {
				break
			}
			after = more
		}
	}
	s.next[c] = next + int64(n)
	return next, nil
}
