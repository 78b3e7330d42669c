package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/item"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
	"github.com/mnemodb/mnemo/metrics"
)

// VectorMemory stores contents in an engine collection and adds the K most
// relevant to a model context. A query is hybrid by default: its words
// (BM25 over the collection's full-text index) and its embedding are
// fused, and a match lifts the contents stored just before and after it
// in its conversation (VectorOptions.Session, Spread). Scores are 1 - d/2 for cosine distance d, in
// [0, 1], as the Chroma-backed original, whichever side found the
// content; a Threshold keeps scores at or above it. JSON contents are embedded as their canonical JSON text (the
// original lower-cases it; we do not) and come back as objects; binary and
// image contents cannot be embedded and are refused. A VectorMemory is safe
// for concurrent use by multiple goroutines.
//
// Any number of VectorMemory values, in one process or (on a server) in
// many, may share a collection: every call reads and writes the store.
// Clear deletes the stored contents and keeps the collection, so the other
// handles go on working (a content another handle adds while Clear runs
// may survive it); when another handle drops the collection, the next call
// creates it again, empty. A call that returns an error changed nothing.
// The collection is marked as a chat memory's (KindVector); another kind of
// memory of the same name is refused with mnemo.ErrCollectionKind.
type VectorMemory struct {
	db        mnemo.Store
	ownDB     bool
	name      string
	space     *textvec.Space
	k         int
	threshold *float32
	r         textvec.Retrieval
	c         *textvec.Bound
	pol       item.Policy   // scope, TTL, clock
	session   string        // of the contents added without one
	sweeper   *item.Sweeper // nil for none
}

// VectorOptions configure a VectorMemory; nil means the defaults.
type VectorOptions struct {
	// Collection name; default DefaultCollection, the original's
	// "memory_store" (see NewVector for databases made with the
	// earlier default).
	Collection string
	// K is how many contents a query returns; default 3.
	K int
	// Threshold, when set (as new(float32(x))), drops results scoring
	// below it. NaN and infinities are ErrInvalid.
	Threshold *float32
	// Embedder; nil means the offline hashing embedder, which matches
	// words, not meaning (to choose it: e, err := embed.NewHashing(0)).
	Embedder embed.Embedder
	// Mode is how queries retrieve: mnemo.ModeHybrid (the default when
	// empty: words and embedding fused), mnemo.ModeVector or
	// mnemo.ModeText.
	Mode mnemo.Mode
	// Spread is the share of a match's score that the two contents
	// added before it and the two after it in its conversation get, as
	// new(float32(x)) in [0, 1]; nil means 0.5, 0 turns it off.
	Spread *float32
	// Session names the conversation the contents this handle adds
	// belong to, unless AddOptions gives another; "" is the handle's
	// scope's one unnamed conversation. A query lifts only the contents
	// of a match's own conversation (Spread), however conversations
	// interleave in the collection. Sessions of two scopes are two
	// conversations.
	Session string
	// Scope is the handle's scope (package scope): every content it adds
	// carries it, and Query, UpdateContext, Delete and Clear see only the
	// contents that have it. nil sees every content and adds unscoped
	// ones.
	Scope scope.Scope
	// TTL, when positive, is how long a content lives; 0 means forever.
	// Expired contents are never returned.
	TTL time.Duration
	// SweepEvery is how often a background sweep deletes expired
	// contents; 0 means DefaultSweepEvery, negative no background sweep
	// (call Sweep).
	SweepEvery time.Duration
	// Clock returns the time expiry uses; nil means time.Now.
	Clock func() time.Time
	// Logger receives the memory's diagnostic messages (an older
	// embedder kept for a collection it made, say) and, for a memory
	// that OpenVector opens in a database of its own, the engine's. Default:
	// discarded.
	Logger *slog.Logger
	// Metrics receives an embed event for every embedding the memory
	// asks for (see package metrics), and, for a memory that OpenVector opens
	// in a database of its own, the engine's events; a database given
	// to NewVector reports through the options it was opened with. Default
	// nil: off.
	Metrics metrics.Recorder
}

// DefaultSweepEvery is how often a VectorMemory deletes expired contents
// in the background by default.
const DefaultSweepEvery = item.DefaultSweepEvery

// MaxMetadataDepth is how deeply a Content's Metadata may nest objects and
// arrays in a VectorMemory: one level less than the database allows in a
// record's metadata.
const MaxMetadataDepth = mnemo.MaxMetadataDepth - 1

// OpenVector opens (or creates) a vector memory in its own database in
// dir; an empty dir means in memory only. Close closes the database.
func OpenVector(dir string, opts *VectorOptions) (*VectorMemory, error) {
	var obs textvec.Observe
	if opts != nil {
		obs = textvec.Observe{Logger: opts.Logger, Metrics: opts.Metrics}
	}
	db, err := textvec.OpenStore(dir, obs)
	if err != nil {
		return nil, err
	}
	v, err := NewVector(context.Background(), db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	v.ownDB = true
	return v, nil
}

// NewVector returns a vector memory in db, creating its collection if
// needed; ctx bounds that. db is any backend: an engine database the
// caller has open (engine.DB.Store) or a server (package postgres). The
// caller keeps ownership of db: Close leaves it open, so one database can
// hold every memory of an agent.
//
// Without VectorOptions.Collection, the collection is DefaultCollection,
// unless db holds a collection named LegacyCollection (the default of
// earlier versions) and none named DefaultCollection: then the memory
// keeps using it, so databases made before keep their memories. Name
// tells which one is in use.
func NewVector(ctx context.Context, db mnemo.Store, opts *VectorOptions) (*VectorMemory, error) {
	var o VectorOptions
	if opts != nil {
		o = *opts
	}
	if o.Collection == "" {
		if o.Collection = defaultCollection(ctx, db); o.Collection == LegacyCollection {
			textvec.Observe{Logger: o.Logger}.Log().Info("using the collection of the earlier default name, as no collection of the current one exists",
				"collection", LegacyCollection, "default", DefaultCollection)
		}
	}
	if o.K == 0 {
		o.K = 3
	}
	if o.K < 0 {
		return nil, fmt.Errorf("%w: K %d", ErrInvalid, o.K)
	}
	if err := textvec.CheckCutoff(ErrInvalid, "Threshold", o.Threshold, math.Inf(-1), math.Inf(1)); err != nil {
		return nil, err
	}
	r := textvec.Retrieval{Mode: o.Mode, Spread: o.Spread}
	if err := r.Check(ErrInvalid); err != nil {
		return nil, err
	}
	pol, err := item.NewPolicy(ErrInvalid, o.Scope, o.TTL, o.Clock)
	if err != nil {
		return nil, err
	}
	if err := (item.Place{Session: o.Session}).Check(ErrInvalid); err != nil {
		return nil, err
	}
	space, err := textvec.New(o.Embedder, ErrNotEmbeddable, ErrInvalid, textvec.Observe{Logger: o.Logger, Metrics: o.Metrics})
	if err != nil {
		return nil, err
	}
	v := &VectorMemory{db: db, name: o.Collection, space: space, k: o.K, threshold: o.Threshold, r: r, pol: pol, session: o.Session}
	if v.c, err = space.Bind(ctx, db, v.name, KindVector); err != nil {
		return nil, err
	}
	v.sweeper = item.StartSweeper(o.SweepEvery, v.Sweep)
	return v, nil
}

// KindVector is the kind of a VectorMemory's collection
// (mnemo.CollectionConfig.Kind).
const KindVector = "chat.vector"

// Default collection names of a VectorMemory.
const (
	DefaultCollection = "memory_store" // the original's default
	LegacyCollection  = "chat_memory"  // the default before it
)

// defaultCollection picks the collection of a VectorMemory opened without
// a name (see NewVector).
func defaultCollection(ctx context.Context, db mnemo.Store) string {
	if db == nil {
		return DefaultCollection
	}
	if _, err := db.Collection(ctx, DefaultCollection); err != nil {
		if _, err := db.Collection(ctx, LegacyCollection); err == nil {
			return LegacyCollection
		}
	}
	return DefaultCollection
}

// Name returns the name of the memory's collection.
func (v *VectorMemory) Name() string { return v.name }

// Add embeds and stores c. Binary and image contents are refused with
// ErrNotEmbeddable; metadata the database cannot store with ErrInvalid:
// values JSON cannot carry (such as NaN), a map that contains itself, or
// nesting deeper than MaxMetadataDepth levels (the metadata object itself
// is the first; it is stored one level down in the record's metadata). c
// is not modified.
func (v *VectorMemory) Add(ctx context.Context, c Content) error {
	_, err := v.AddWith(ctx, c, nil)
	return err
}

// AddOptions are the options of one AddWith; nil means Add's.
type AddOptions struct {
	// ExpiresAt, when not zero, is when the content expires; zero means
	// after VectorOptions.TTL, or never.
	ExpiresAt time.Time
	// Session, when set, is the content's conversation instead of the
	// handle's (VectorOptions.Session).
	Session string
	// Position, when set, is the content's place in its conversation (a
	// turn number, a time in milliseconds), for contents added out of
	// order; nil means the order in which they are added. Give every
	// content of a conversation a position, or none. Its magnitude is
	// below 2^53.
	Position *int64
}

// AddWith is Add with options; it returns the new content's ID (for
// Delete).
func (v *VectorMemory) AddWith(ctx context.Context, c Content, o *AddOptions) (string, error) {
	var ao AddOptions
	if o != nil {
		ao = *o
	}
	place, err := item.PlaceOf(ErrInvalid, ao.Session, v.session, ao.Position)
	if err != nil {
		return "", err
	}
	if _, ok := c.Content.([]byte); ok || strings.HasPrefix(c.MimeType, "image/") || c.MimeType == OctetStream {
		return "", fmt.Errorf("%w: %s content", ErrNotEmbeddable, c.MimeType)
	}
	t, err := text(c)
	if err != nil {
		return "", err
	}
	vec, err := v.space.Vector(ctx, "text", t)
	if err != nil {
		return "", err
	}
	expires, err := v.pol.Expiry(ErrInvalid, 0, ao.ExpiresAt)
	if err != nil {
		return "", err
	}
	_, isJSON := c.Content.(map[string]any)
	meta := item.Stamp(map[string]any{"mime_type": c.MimeType, "json": isJSON}, v.pol.Scope, expires)
	if c.Metadata != nil {
		meta["metadata"] = maps.Clone(c.Metadata)
	}
	item.StampPlace(meta, v.pol.Scope, place, true)
	id, err := v.space.Insert(ctx, v.c, mnemo.Record{Vector: vec, Content: t, Metadata: meta})
	if errors.Is(err, mnemo.ErrInvalidRecord) {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return id, err
}

// Delete removes the content with the given ID (AddWith returned it); an
// absent ID, or one of another scope, is a no-op.
func (v *VectorMemory) Delete(ctx context.Context, id string) error {
	return v.c.Do(ctx, func(c mnemo.Collection) error {
		_, err := textvec.DeleteIf(ctx, c, v.pol.InScope, id)
		return err
	})
}

// Sweep deletes the expired contents of the handle's scope (every
// scope's, without one) and returns how many it deleted; the background
// sweep (VectorOptions.SweepEvery) calls it. O(contents).
func (v *VectorMemory) Sweep(ctx context.Context) (int, error) { return v.pol.Sweep(ctx, v.c) }

// Query returns up to K stored contents most similar to query (a string or
// a Content), best first, each with its score in Metadata["score"] (the
// stored metadata is copied, never changed).
func (v *VectorMemory) Query(ctx context.Context, query any) (QueryResult, error) {
	var t string
	switch q := query.(type) {
	case string:
		t = q
	case Content:
		var err error
		if t, err = text(q); err != nil {
			return QueryResult{}, err
		}
	default:
		return QueryResult{}, fmt.Errorf("%w: query of type %T (want string or Content)", ErrInvalid, query)
	}
	if strings.TrimSpace(t) == "" {
		return QueryResult{}, nil // nothing to match (see the package doc)
	}
	var minSim *float32
	if v.threshold != nil {
		// score = 1 - d/2 = (1 + similarity)/2; the engine drops the
		// clearly lower hits, the exact threshold is applied below.
		minSim = new(math.Nextafter32(2**v.threshold-1, float32(math.Inf(-1))))
	}
	f, err := v.pol.Read(ErrInvalid, nil, false, nil)
	if err != nil {
		return QueryResult{}, err
	}
	hits, err := v.space.Query(ctx, v.c, v.r, t, v.k, f, minSim)
	if err != nil {
		return QueryResult{}, err
	}
	var out QueryResult
	for _, h := range hits {
		score := 1 - h.Distance/2
		if v.threshold != nil && score < *v.threshold {
			continue
		}
		out.Results = append(out.Results, fromRecord(h.Record, score))
	}
	return out, nil
}

func fromRecord(r mnemo.Record, score float32) Content {
	c := Content{Content: r.Content}
	c.MimeType, _ = r.Metadata["mime_type"].(string)
	if isJSON, _ := r.Metadata["json"].(bool); isJSON {
		var m map[string]any
		if json.Unmarshal([]byte(r.Content), &m) == nil {
			c.Content = m
		}
	}
	c.Metadata = map[string]any{}
	if um, ok := r.Metadata["metadata"].(map[string]any); ok {
		maps.Copy(c.Metadata, um)
	}
	c.Metadata["score"] = float64(score)
	return c
}

// VectorHeader starts the system message VectorMemory.UpdateContext adds.
const VectorHeader = "\nRelevant memory content:\n"

// UpdateContext queries with the context's last message and, when anything
// is found, appends one system message: VectorHeader and the numbered
// contents joined by newlines. A last message of symbols alone ("?")
// is queried like any other; an empty one finds nothing, and nothing is
// added.
func (v *VectorMemory) UpdateContext(ctx context.Context, mc ModelContext) (UpdateContextResult, error) {
	msgs, err := mc.Messages(ctx)
	if err != nil || len(msgs) == 0 {
		return UpdateContextResult{}, err
	}
	res, err := v.Query(ctx, msgs[len(msgs)-1].Content)
	if errors.Is(err, ErrNotEmbeddable) {
		return UpdateContextResult{}, nil // nothing searchable in the last message
	}
	if err != nil || len(res.Results) == 0 {
		return UpdateContextResult{}, err
	}
	if err := mc.AddMessage(ctx, Message{Role: "system", Content: VectorHeader + numbered(res.Results)}); err != nil {
		return UpdateContextResult{}, err
	}
	return UpdateContextResult{Memories: res}, nil
}

// Clear removes every stored content of the handle's scope (every
// content, without one), in one atomic delete. The collection stays, so
// other handles on the same memory keep working; a content they add
// while Clear runs may survive it.
func (v *VectorMemory) Clear(ctx context.Context) error {
	return v.c.Do(ctx, func(c mnemo.Collection) error {
		var ids []string
		err := textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
			for _, r := range page {
				if v.pol.InScope(r.Metadata) {
					ids = append(ids, r.ID)
				}
			}
			return nil
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		_, err = textvec.DeleteIf(ctx, c, v.pol.InScope, ids...)
		return err
	})
}

// Close stops the background sweep and closes the database if OpenVector
// opened it.
func (v *VectorMemory) Close() error {
	v.sweeper.Stop()
	if v.ownDB {
		return v.db.Close()
	}
	return nil
}

var (
	_ Memory = (*ListMemory)(nil)
	_ Memory = (*VectorMemory)(nil)
)
