package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/ctxsync"
	"github.com/mnemodb/mnemo/memory/internal/item"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
	"github.com/mnemodb/mnemo/metrics"
)

// Semantic is a store of facts searched by meaning and by words. Facts are
// embedded with an embed.Embedder (the offline hashing embedder by
// default) and kept in an engine collection with a full-text index. Search
// is hybrid by default: the query's words (BM25) and its embedding are
// fused, and a match lifts the facts stored just before and after it in
// its session, for facts stored with one (SemanticOptions.Session and
// Spread); hits come best first, each with its cosine
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
//
// # Many users, updates and expiry
//
// A handle with a scope (SemanticOptions.Scope, package scope) stores it
// with every fact and reads, updates and deletes only facts that have
// it, the filter applied inside the engine's search; SearchWith reads
// another scope or all of them when asked, and filters by metadata.
// Update (or AddWith with Replaces) changes a fact in place, keeping its
// ID, and History lists its changes. A fact may expire (TTL, AddWith's
// ExpiresAt): an expired fact is never returned, and Sweep, run in the
// background every SweepEvery, deletes it.
type Semantic struct {
	db    mnemo.Store
	ownDB bool
	c     *textvec.Bound
	space *textvec.Space
	maxD  *float32
	r     textvec.Retrieval
	pol   item.Policy // scope, TTL, clock
	// session is the session of the facts stored without one.
	session string
	// mu serialises Delete's find-then-remove and Update's
	// read-then-write, like the original's per-instance lock; the
	// collection itself is concurrency-safe.
	mu      ctxsync.Mutex
	sweeper *item.Sweeper // runs Sweep in the background; nil for none
}

var _ Store = (*Semantic)(nil)

// SemanticOptions configure a Semantic store; nil means the defaults.
type SemanticOptions struct {
	// Collection name; default "memories".
	Collection string
	// Embedder; nil means the offline hashing embedder, which matches
	// words, not meaning (to choose it: e, err := embed.NewHashing(0)).
	Embedder embed.Embedder
	// MaxDistance, when set (as new(float32(d))), is the cosine-distance
	// cutoff of Search, in [0, 2]: facts farther than it are dropped.
	MaxDistance *float32
	// Mode is how searches retrieve: mnemo.ModeHybrid (the default when
	// empty: words and embedding fused), mnemo.ModeVector or
	// mnemo.ModeText.
	Mode mnemo.Mode
	// Spread is the share of a match's score that the two facts stored
	// before it and the two after it in its session get, as
	// new(float32(x)) in [0, 1]; nil means 0.5, 0 turns it off. Only
	// facts stored with a session spread: facts without one have no
	// order that means anything (see Session).
	Spread *float32
	// Session is the session (a conversation) the facts this handle
	// stores belong to, unless AddOptions gives another; "" for none.
	// A search lifts the facts stored next to a match in its session
	// (Spread), in the order they were stored there or by the positions
	// AddOptions gives. Sessions of two scopes are two conversations.
	Session string
	// Scope is the handle's scope (package scope): every fact it stores
	// carries it and every read sees only the facts that have it. nil
	// reads every fact and stores unscoped ones.
	Scope scope.Scope
	// TTL, when positive, is how long a fact stored without its own
	// expiry lives; 0 means forever.
	TTL time.Duration
	// SweepEvery is how often a background sweep deletes the facts that
	// have expired (they are never returned meanwhile); 0 means
	// DefaultSweepEvery and a negative value no background sweep (call
	// Sweep).
	SweepEvery time.Duration
	// Clock returns the time expiry and history use; nil means
	// time.Now.
	Clock func() time.Time
	// Logger receives the memory's diagnostic messages (an older
	// embedder kept for a collection it made, say) and, for a memory
	// that OpenSemantic opens in a database of its own, the engine's. Default:
	// discarded.
	Logger *slog.Logger
	// Metrics receives an embed event for every embedding the memory
	// asks for (see package metrics), and, for a memory that OpenSemantic opens
	// in a database of its own, the engine's events; a database given
	// to NewSemantic reports through the options it was opened with. Default
	// nil: off.
	Metrics metrics.Recorder
}

// DefaultSweepEvery is how often a Semantic store deletes expired facts
// in the background by default.
const DefaultSweepEvery = item.DefaultSweepEvery

// OpenSemantic opens (or creates) a fact store in its own database in dir;
// an empty dir means in memory only. Close closes the database.
func OpenSemantic(dir string, opts *SemanticOptions) (*Semantic, error) {
	var obs textvec.Observe
	if opts != nil {
		obs = textvec.Observe{Logger: opts.Logger, Metrics: opts.Metrics}
	}
	db, err := textvec.OpenStore(dir, obs)
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
	pol, err := item.NewPolicy(ErrInvalid, o.Scope, o.TTL, o.Clock)
	if err != nil {
		return nil, err
	}
	if err := (item.Place{Session: o.Session}).Check(ErrInvalid); err != nil {
		return nil, err
	}
	r := textvec.Retrieval{Mode: o.Mode, Spread: o.Spread}
	if err := r.Check(ErrInvalid); err != nil {
		return nil, err
	}
	space, err := textvec.New(o.Embedder, ErrEmpty, ErrInvalid, textvec.Observe{Logger: o.Logger, Metrics: o.Metrics})
	if err != nil {
		return nil, err
	}
	c, err := space.Bind(ctx, db, o.Collection, KindSemantic)
	if err != nil {
		return nil, err
	}
	sm := &Semantic{db: db, c: c, space: space, maxD: o.MaxDistance, r: r, pol: pol, session: o.Session}
	sm.sweeper = item.StartSweeper(o.SweepEvery, sm.Sweep)
	return sm, nil
}

// Close stops the background sweep and closes the database if
// OpenSemantic opened it.
func (s *Semantic) Close() error {
	s.sweeper.Stop()
	if s.ownDB {
		return s.db.Close()
	}
	return nil
}

// Hit is one fact a search found, with why it was returned.
type Hit struct {
	ID       string         // the fact's ID; equal texts stored twice have two
	Text     string         // the fact
	Distance float32        // cosine distance to the query, in [0, 2]
	Metadata map[string]any // as given to Add (nil for none); the caller owns it
	// Score ranks the hits, best first: the fused score in hybrid mode,
	// the similarity (1 - Distance) in vector mode, BM25 in text mode.
	Score float64
	// VectorRank and TextRank are the fact's ranks (from 1) among the
	// candidates of the query's embedding and of its words; 0 when that
	// side did not find it. A hit with neither was lifted by a match
	// stored beside it (Spread).
	VectorRank, TextRank int
	Scope                scope.Scope // the fact's scope; nil for none
	Session              string      // the fact's session; "" for none
	Expires              time.Time   // when the fact expires; zero for never
}

// Spread reports whether h was returned only for a match stored beside
// it (neighbour spreading), found by neither the query's embedding nor
// its words.
func (h Hit) Spread() bool { return h.VectorRank == 0 && h.TextRank == 0 }

// Store saves a fact. Storing the same fact twice keeps two copies, as the
// original does (Delete removes both).
func (s *Semantic) Store(ctx context.Context, content string) error {
	_, err := s.Add(ctx, content, nil)
	return err
}

// Add saves a fact with metadata (JSON-compatible values, as
// mnemo.Record.Metadata; nil for none) and returns its new ID, with the
// handle's scope, session and TTL. meta is copied. The keys
// "mnemo.pos", "mnemo.group", "mnemo.session", "mnemo.expires" and
// "mnemo.history" and those starting "mnemo.scope." are reserved
// (ErrInvalid).
func (s *Semantic) Add(ctx context.Context, content string, meta map[string]any) (string, error) {
	return s.AddWith(ctx, content, &AddOptions{Metadata: meta})
}

// AddOptions are the options of one AddWith; nil means Add's.
type AddOptions struct {
	Metadata map[string]any
	// TTL, when positive, is how long this fact lives, instead of the
	// store's; ExpiresAt, when not zero, is when it expires (it wins over
	// TTL).
	TTL       time.Duration
	ExpiresAt time.Time
	// Replaces, when set, is the ID of a fact this one supersedes: that
	// fact is updated in place (as Update), keeping its ID, session and
	// position and recording the change in its history, and AddWith
	// returns its ID. A fact the
	// handle cannot see (absent, expired or of another scope) is
	// ErrNotFound.
	Replaces string
	// Session, when set, is the fact's session instead of the store's
	// (SemanticOptions.Session).
	Session string
	// Position, when set, is the fact's place in its session (a turn
	// number, a time in milliseconds), for facts stored out of order;
	// nil means the order of storage. Give every fact of a session a
	// position, or none: the two do not interleave. Its magnitude is
	// below 2^53.
	Position *int64
}

// AddWith is Add with options.
func (s *Semantic) AddWith(ctx context.Context, content string, o *AddOptions) (string, error) {
	var ao AddOptions
	if o != nil {
		ao = *o
	}
	if err := item.CheckMeta(ErrInvalid, ao.Metadata); err != nil {
		return "", err
	}
	place, err := item.PlaceOf(ErrInvalid, ao.Session, s.session, ao.Position)
	if err != nil {
		return "", err
	}
	expires, err := s.pol.Expiry(ErrInvalid, ao.TTL, ao.ExpiresAt)
	if err != nil {
		return "", err
	}
	if ao.Replaces != "" {
		return ao.Replaces, s.update(ctx, ao.Replaces, content, &ao, expires)
	}
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
	meta := item.Stamp(ao.Metadata, s.pol.Scope, expires)
	item.StampPlace(meta, s.pol.Scope, place, false)
	if _, err := s.space.Insert(ctx, s.c, mnemo.Record{ID: id.String(), Vector: v, Content: content, Metadata: meta}); err != nil {
		if errors.Is(err, mnemo.ErrInvalidRecord) {
			return "", fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		return "", err
	}
	return id.String(), nil
}

// Fact is one stored fact (Get).
type Fact struct {
	ID       string
	Text     string
	Metadata map[string]any // as given (nil for none); the caller owns it
	Scope    scope.Scope
	Session  string    // "" for none
	Expires  time.Time // zero for never
	// History lists the fact's updates, oldest first (see Update).
	History []Change
}

// Change is one update of a fact: its text before and after, and when.
// A history keeps the newest 64 changes, each side cut to 16 KiB.
type Change = item.Change

// Get returns the fact with the given ID; ok is false when the handle
// cannot see it (absent, expired or of another scope).
func (s *Semantic) Get(ctx context.Context, id string) (Fact, bool, error) {
	r, ok, err := s.get(ctx, id)
	if err != nil || !ok {
		return Fact{}, false, err
	}
	return Fact{ID: r.ID, Text: r.Content, Metadata: item.Strip(r.Metadata), Scope: scope.FromMetadata(r.Metadata),
		Session: item.Session(r.Metadata), Expires: item.Expires(r.Metadata), History: item.History(r.Metadata)}, true, nil
}

// get reads a record the handle can see.
func (s *Semantic) get(ctx context.Context, id string) (mnemo.Record, bool, error) {
	var r mnemo.Record
	var ok bool
	err := s.c.Do(ctx, func(c mnemo.Collection) error {
		var err error
		r, ok, err = c.Get(ctx, id)
		return err
	})
	if err != nil || !ok || !s.pol.Visible(r.Metadata) {
		return mnemo.Record{}, false, err
	}
	return r, true, nil
}

// History returns the updates of the fact with the given ID, oldest
// first; ErrNotFound when the handle cannot see it.
func (s *Semantic) History(ctx context.Context, id string) ([]Change, error) {
	f, ok, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return f.History, nil
}

// Update replaces the text of the fact with the given ID, keeping its ID,
// metadata, scope and expiry, and records the change (old text, new
// text, time) in its history. ErrNotFound when the handle cannot see the
// fact; updating a fact to its own text records nothing.
func (s *Semantic) Update(ctx context.Context, id, content string) error {
	return s.update(ctx, id, content, nil, time.Time{})
}

// update is Update; o, when set, also replaces the metadata, and the
// expiry with expires (AddWith with Replaces).
func (s *Semantic) update(ctx context.Context, id, content string, o *AddOptions, expires time.Time) error {
	v, err := s.space.Vector(ctx, "fact", content)
	if err != nil {
		return err
	}
	if err := s.mu.Lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for range updateTries {
		old, ok, err := s.get(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		meta := old.Metadata
		if o != nil {
			// The new fact's metadata and expiry, with the old one's
			// scope (a handle of a narrower scope replaces a fact it
			// sees, which stays its owner's), history and place.
			fresh := item.Stamp(o.Metadata, scope.FromMetadata(meta), expires)
			for _, k := range []string{item.HistoryField, textvec.PosField, textvec.GroupField, item.SessionField} {
				if v, ok := meta[k]; ok {
					fresh[k] = v
				}
			}
			meta = fresh
		} else if old.Content == content {
			return nil
		}
		meta = item.WithChange(meta, Change{Old: old.Content, New: content, At: s.pol.Now().UTC()})
		// Written only if the fact is still there, still the handle's,
		// and unchanged since it was read (the same history): an update
		// never brings back a fact another handle deleted, nor drops
		// another handle's update from the history.
		mark := historyMark(old.Metadata)
		var wrote bool
		err = s.c.Do(ctx, func(c mnemo.Collection) error {
			ids, err := textvec.UpsertIf(ctx, c, func(exists bool, stored map[string]any) bool {
				return exists && s.pol.Visible(stored) && historyMark(stored) == mark
			}, mnemo.Record{ID: id, Vector: v, Content: content, Metadata: meta})
			if errors.Is(err, mnemo.ErrInvalidRecord) {
				return fmt.Errorf("%w: %w", ErrInvalid, err)
			}
			wrote = len(ids) == 1
			return err
		})
		if err != nil || wrote {
			return err
		}
		// Changed or gone since it was read: read it again.
	}
	return fmt.Errorf("%w: fact %q changed by another handle each of %d times", ErrConflict, id, updateTries)
}

// updateTries is how many times an update reads a fact again when
// another handle changes it between the read and the write.
const updateTries = 8

// historyMark identifies a fact's state by its history: its length and
// newest change (a fact never updated has the empty mark).
func historyMark(meta map[string]any) string {
	h := item.History(meta)
	if len(h) == 0 {
		return ""
	}
	last := h[len(h)-1]
	return fmt.Sprintf("%d|%s|%d|%s", len(h), last.At.Format(time.RFC3339Nano), len(last.New), last.New)
}

// Search returns up to n facts most relevant to query, best first,
// applying the store's MaxDistance.
func (s *Semantic) Search(ctx context.Context, query string, n int) ([]string, error) {
	return texts(s.search(ctx, query, &SearchOptions{N: n}))
}

// SearchWithin is Search with a cosine-distance cutoff for this call.
func (s *Semantic) SearchWithin(ctx context.Context, query string, n int, maxDistance float32) ([]string, error) {
	return texts(s.search(ctx, query, &SearchOptions{N: n, MaxDistance: &maxDistance}))
}

// SearchHits is Search returning each fact's ID, distance, score, ranks
// and metadata with its text, best first by Score; equal facts come back
// as separate hits.
func (s *Semantic) SearchHits(ctx context.Context, query string, n int) ([]Hit, error) {
	return s.search(ctx, query, &SearchOptions{N: n})
}

// SearchOptions are the options of one SearchWith; nil means
// SearchHits's defaults.
type SearchOptions struct {
	// N is the number of hits wanted; <= 0 means DefaultResults.
	N int
	// MaxDistance, when set, is this call's cutoff instead of the store's.
	MaxDistance *float32
	// Where filters the facts by their metadata, in the engine's filter
	// syntax (mnemo.NewFilter: {"topic": "work"}, {"year": {"$gte":
	// 2020}}, $and, $or, ...); nil admits every fact. It may not name a
	// reserved key: the scope and expiry are the handle's to apply.
	Where map[string]any
	// Scope, when set, reads that scope instead of the handle's;
	// AllScopes reads every scope (a cross-scope read, asked for).
	Scope     scope.Scope
	AllScopes bool
}

// SearchWith is SearchHits with options: a metadata filter, another scope
// or every scope, a cutoff for this call.
func (s *Semantic) SearchWith(ctx context.Context, query string, o *SearchOptions) ([]Hit, error) {
	return s.search(ctx, query, o)
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

func (s *Semantic) search(ctx context.Context, query string, o *SearchOptions) ([]Hit, error) {
	var so SearchOptions
	if o != nil {
		so = *o
	}
	n, maxD := so.N, s.maxD
	if n <= 0 {
		n = DefaultResults
	}
	if so.MaxDistance != nil {
		if err := textvec.CheckCutoff(ErrInvalid, "max distance", so.MaxDistance, 0, 2); err != nil {
			return nil, err
		}
		maxD = so.MaxDistance
	}
	f, err := s.pol.Read(ErrInvalid, so.Scope, so.AllScopes, so.Where)
	if err != nil {
		return nil, err
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
	hits, err := s.space.Query(ctx, s.c, s.r, query, n, f, minSim)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		if maxD == nil || h.Distance <= *maxD {
			m := h.Record.Metadata
			out = append(out, Hit{ID: h.Record.ID, Text: h.Record.Content, Distance: h.Distance, Metadata: item.Strip(m),
				Score: h.Score, VectorRank: h.VectorRank, TextRank: h.TextRank, Scope: scope.FromMetadata(m), Session: item.Session(m), Expires: item.Expires(m)})
		}
	}
	return out, nil
}

// Delete removes the fact whose ID is identifier (the ID Add returned)
// or, when the handle sees no fact with that ID, every fact exactly equal
// to it; none is a no-op. A scoped handle deletes only within its scope.
func (s *Semantic) Delete(ctx context.Context, identifier string) error {
	if err := s.mu.Lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	ids := []string{identifier}
	ok := false
	if _, err := uuid.Parse(identifier); err == nil { // the IDs Add makes
		if _, ok, err = s.get(ctx, identifier); err != nil {
			return err
		}
	}
	if !ok {
		ids = nil
		err := s.each(ctx, func(r mnemo.Record) {
			if r.Content == identifier {
				ids = append(ids, r.ID)
			}
		})
		if err != nil || len(ids) == 0 {
			return err
		}
	}
	return s.c.Do(ctx, func(c mnemo.Collection) error {
		_, err := textvec.DeleteIf(ctx, c, s.pol.InScope, ids...) // still the handle's at the delete
		return err
	})
}

// ListAll returns every fact the handle sees, oldest first.
func (s *Semantic) ListAll(ctx context.Context) ([]string, error) {
	var out []string
	err := s.each(ctx, func(r mnemo.Record) { out = append(out, r.Content) })
	return out, err
}

// each calls fn for every fact the handle sees, oldest first.
func (s *Semantic) each(ctx context.Context, fn func(mnemo.Record)) error {
	return s.scan(ctx, func(r mnemo.Record) {
		if s.pol.Visible(r.Metadata) {
			fn(r)
		}
	})
}

// scan calls fn for every record of the collection, oldest first.
func (s *Semantic) scan(ctx context.Context, fn func(mnemo.Record)) error {
	return s.c.Do(ctx, func(c mnemo.Collection) error {
		return textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
			for _, r := range page {
				fn(r)
			}
			return nil
		})
	})
}

// Sweep deletes the facts of the handle's scope (every fact's, without
// one) that have expired, and returns how many it deleted. Expired facts
// are never returned, swept or not; the background sweep
// (SemanticOptions.SweepEvery) calls Sweep. O(facts).
func (s *Semantic) Sweep(ctx context.Context) (int, error) { return s.pol.Sweep(ctx, s.c) }

// SemanticStats counts the facts of a handle's scope (every fact's,
// without one).
type SemanticStats struct {
	Facts   int // live facts, the ones reads return
	Expired int // expired facts a sweep has not deleted yet
}

// Stats counts the facts of the handle's scope. O(facts).
func (s *Semantic) Stats(ctx context.Context) (SemanticStats, error) {
	live, expired, err := s.pol.Count(ctx, s.c)
	return SemanticStats{Facts: live, Expired: expired}, err
}
