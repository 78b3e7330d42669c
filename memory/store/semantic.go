package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/google/uuid"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/ctxsync"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
)

// Semantic is a store of facts searched by meaning and by words. Facts are
// embedded with an embed.Embedder (the offline hashing embedder by
// default) and kept in an engine collection with a full-text index. Search
// is hybrid by default: the query's words (BM25) and its embedding are
// fused, and a match lifts the facts stored just before and after it
// (SemanticOptions.Spread); hits come best first, each with its cosine
// distance to the query. When MaxDistance is set, hits farther than it
// are dropped, whichever side found them (distance in [0, 2]; a fact
// exactly at the cutoff is kept). A Semantic is safe for concurrent use by
// multiple goroutines.
//
// Any number of Semantic values, in one process or (on a server) in many,
// may share a collection: every call reads and writes the store. A call
// that returns an error changed nothing. The collection is marked as a
// fact store's (KindSemantic); another kind of memory of the same name is
// refused with mnemo.ErrCollectionKind. When another handle drops the
// collection, the next call creates it again, empty.
type Semantic struct {
	db    mnemo.Store
	ownDB bool
	c     *textvec.Bound
	space *textvec.Space
	maxD  *float32
	r     textvec.Retrieval
	// mu serialises Delete's find-then-remove, like the original's
	// per-instance lock; the collection itself is concurrency-safe.
	mu ctxsync.Mutex
}

var _ Store = (*Semantic)(nil)

// SemanticOptions configure a Semantic store; nil means the defaults.
type SemanticOptions struct {
	// Collection name; default "memories".
	Collection string
	// Embedder; default embed.NewHashing(0).
	Embedder embed.Embedder
	// MaxDistance, when set (as new(float32(d))), is the cosine-distance
	// cutoff of Search, in [0, 2]: facts farther than it are dropped.
	MaxDistance *float32
	// Mode is how searches retrieve: mnemo.ModeHybrid (the default when
	// empty: words and embedding fused), mnemo.ModeVector or
	// mnemo.ModeText.
	Mode mnemo.Mode
	// Spread is the share of a match's score that the facts stored up
	// to two places before and after it get, as new(float32(x)) in
	// [0, 1]; nil means 0.5, 0 turns it off (see toolmem.Options).
	Spread *float32
}

// OpenSemantic opens (or creates) a fact store in its own database in dir;
// an empty dir means in memory only. Close closes the database.
func OpenSemantic(dir string, opts *SemanticOptions) (*Semantic, error) {
	db, err := textvec.OpenStore(dir)
	if err != nil {
		return nil, err
	}
	s, err := NewSemantic(context.Background(), db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownDB = true
	return s, nil
}

// KindSemantic is the kind of a Semantic store's collection
// (mnemo.CollectionConfig.Kind).
const KindSemantic = "store.semantic"

// NewSemantic returns a fact store in db, creating its collection if
// needed; ctx bounds that. db is any backend: an engine database the
// caller has open (engine.DB.Store) or a server (package postgres). The
// caller keeps ownership of db: Close leaves it open, so one database can
// hold every memory of an agent.
func NewSemantic(ctx context.Context, db mnemo.Store, opts *SemanticOptions) (*Semantic, error) {
	var o SemanticOptions
	if opts != nil {
		o = *opts
	}
	if o.Collection == "" {
		o.Collection = "memories"
	}
	if err := textvec.CheckCutoff(ErrInvalid, "MaxDistance", o.MaxDistance, 0, 2); err != nil {
		return nil, err
	}
	r := textvec.Retrieval{Mode: o.Mode, Spread: o.Spread}
	if err := r.Check(ErrInvalid); err != nil {
		return nil, err
	}
	space, err := textvec.New(o.Embedder, ErrEmpty, ErrInvalid)
	if err != nil {
		return nil, err
	}
	c, err := space.Bind(ctx, db, o.Collection, KindSemantic)
	if err != nil {
		return nil, err
	}
	return &Semantic{db: db, c: c, space: space, maxD: o.MaxDistance, r: r}, nil
}

// Close closes the database if OpenSemantic opened it; otherwise it does
// nothing.
func (s *Semantic) Close() error {
	if s.ownDB {
		return s.db.Close()
	}
	return nil
}

// Hit is one fact SearchHits found.
type Hit struct {
	ID       string         // the fact's ID; equal texts stored twice have two
	Text     string         // the fact
	Distance float32        // cosine distance to the query, in [0, 2]
	Metadata map[string]any // as given to Add (nil for Store); the caller owns it
}

// Store saves a fact. Storing the same fact twice keeps two copies, as the
// original does (Delete removes both).
func (s *Semantic) Store(ctx context.Context, content string) error {
	_, err := s.Add(ctx, content, nil)
	return err
}

// Add saves a fact with metadata (JSON-compatible values, as
// mnemo.Record.Metadata; nil for none) and returns its new ID. meta is
// copied. The key "mnemo.pos" is reserved: the store keeps the fact's place
// in the order of storing there.
func (s *Semantic) Add(ctx context.Context, content string, meta map[string]any) (string, error) {
	v, err := s.space.Vector(ctx, "fact", content)
	if err != nil {
		return "", err
	}
	// Version 7 UUIDs sort by creation time, so ListAll is in insertion
	// order.
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	if _, err := s.space.Insert(ctx, s.c, mnemo.Record{ID: id.String(), Vector: v, Content: content, Metadata: meta}); err != nil {
		if errors.Is(err, mnemo.ErrInvalidRecord) {
			return "", fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return "", err
	}
	return id.String(), nil
}

// Search returns up to n facts nearest to query in meaning, applying the
// store's MaxDistance.
func (s *Semantic) Search(ctx context.Context, query string, n int) ([]string, error) {
	return texts(s.search(ctx, query, n, s.maxD))
}

// SearchWithin is Search with a cosine-distance cutoff for this call.
func (s *Semantic) SearchWithin(ctx context.Context, query string, n int, maxDistance float32) ([]string, error) {
	if err := textvec.CheckCutoff(ErrInvalid, "max distance", &maxDistance, 0, 2); err != nil {
		return nil, err
	}
	return texts(s.search(ctx, query, n, &maxDistance))
}

// SearchHits is Search returning each fact's ID, distance and metadata
// with its text, nearest first; equal facts come back as separate hits.
func (s *Semantic) SearchHits(ctx context.Context, query string, n int) ([]Hit, error) {
	return s.search(ctx, query, n, s.maxD)
}

func texts(hits []Hit, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Text
	}
	return out, nil
}

func (s *Semantic) search(ctx context.Context, query string, n int, maxD *float32) ([]Hit, error) {
	if n <= 0 {
		n = DefaultResults
	}
	if strings.TrimSpace(query) == "" {
		return nil, nil // nothing to match (see the package doc)
	}
	var minSim *float32
	if maxD != nil {
		// The engine drops the clearly farther hits; the exact cutoff is
		// applied on the distance below.
		minSim = new(math.Nextafter32(1-*maxD, -1))
	}
	hits, err := s.space.Query(ctx, s.c, s.r, query, n, nil, minSim)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		if maxD == nil || h.Distance <= *maxD {
			meta := h.Record.Metadata
			if len(meta) == 0 {
				meta = nil // a fact stored without metadata
			}
			out = append(out, Hit{ID: h.Record.ID, Text: h.Record.Content, Distance: h.Distance, Metadata: meta})
		}
	}
	return out, nil
}

// Delete removes every fact exactly equal to identifier; none is a no-op.
func (s *Semantic) Delete(ctx context.Context, identifier string) error {
	if err := s.mu.Lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	var ids []string
	err := s.each(ctx, func(r mnemo.Record) {
		if r.Content == identifier {
			ids = append(ids, r.ID)
		}
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	return s.c.Do(ctx, func(c mnemo.Collection) error {
		_, err := c.Delete(ctx, ids...)
		return err
	})
}

// ListAll returns every stored fact, oldest first.
func (s *Semantic) ListAll(ctx context.Context) ([]string, error) {
	var out []string
	err := s.each(ctx, func(r mnemo.Record) { out = append(out, r.Content) })
	return out, err
}

func (s *Semantic) each(ctx context.Context, fn func(mnemo.Record)) error {
	return s.c.Do(ctx, func(c mnemo.Collection) error {
		return textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
			for _, r := range page {
				fn(r)
			}
			return nil
		})
	})
}
