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
	"log/slog"
	"maps"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/ctxsync"
	"github.com/mnemodb/mnemo/metrics"
)

// Observe is what an adapter's options give for logging and metrics:
// its Logger and Metrics fields, passed on as they are.
type Observe struct {
	Logger  *slog.Logger     // nil: discarded
	Metrics metrics.Recorder // nil: off
}

// Log returns the logger to use (never nil).
func (o Observe) Log() *slog.Logger { return telemetry.Logger(o.Logger) }

// Embed embeds texts with e, reporting an embed event (with collection,
// which may be empty) to o.Metrics.
func (o Observe) Embed(ctx context.Context, e embed.Embedder, collection string, texts []string) ([][]float32, error) {
	t := telemetry.Start(o.Metrics)
	vs, err := e.Embed(ctx, texts)
	if t.On() {
		n := 0
		for _, s := range texts {
			n += len(s)
		}
		t.Done(metrics.Event{Op: metrics.OpEmbed, Collection: collection, Records: len(texts), Bytes: int64(n), Err: err})
	}
	return vs, err
}

// Space is an embedder as an adapter uses it: one text at a time, bad text
// reported with the adapter's own sentinels, and collections whose vectors
// it made. A Space is safe for concurrent use by multiple goroutines when
// its embedder is (every embed.Embedder is).
type Space struct {
	emb     embed.Embedder
	dflt    bool       // emb is the default: it may follow an older offline embedder's collection
	mu      sync.Mutex // guards emb and dflt
	empty   error      // wrapped for empty text and text with nothing to embed
	invalid error      // wrapped for invalid UTF-8
	obs     Observe

	placing ctxsync.Mutex    // serialises Place's scans; guards next
	next    map[string]int64 // next position per collection name, of collections without a sequence (Place)
}

// New returns a Space embedding with e, or with the offline default
// (embed.NewHashing(0)) when e is nil. empty and invalid are the
// adapter's sentinels for empty text and for invalid UTF-8; obs is where
// it logs and reports its embeddings.
func New(e embed.Embedder, empty, invalid error, obs Observe) (*Space, error) {
	if e == nil {
		h, err := embed.NewHashing(0)
		if err != nil {
			return nil, err
		}
		return &Space{emb: h, dflt: true, empty: empty, invalid: invalid, obs: obs}, nil
	}
	return &Space{emb: e, empty: empty, invalid: invalid, obs: obs}, nil
}

// Embedder returns the embedder.
func (s *Space) Embedder() embed.Embedder {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emb
}

// Embed embeds texts for collection (reported in the embed event) with
// the Space's embedder, without Vector's checks.
func (s *Space) Embed(ctx context.Context, collection string, texts []string) ([][]float32, error) {
	return s.obs.Embed(ctx, s.Embedder(), collection, texts)
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
	vs, err := s.obs.Embed(ctx, s.Embedder(), "", []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 || len(vs[0]) != s.Embedder().Dimension() {
		return nil, fmt.Errorf("%w: %s returned %d vectors for one %s (want one of %d values)", embed.ErrResponse, s.Embedder().Identity(), len(vs), what, s.Embedder().Dimension())
	}
	if embed.IsZero(vs[0]) {
		if _, offline := embed.Offline(s.Embedder().Identity()); !offline {
			// A model maps any text to some direction: a zero vector is
			// the server's fault, not the text's.
			return nil, fmt.Errorf("%w: %s returned a zero vector for the %s", embed.ErrResponse, s.Embedder().Identity(), what)
		}
		return nil, fmt.Errorf("%w: %s has nothing to embed (no letters or digits)", s.empty, what)
	}
	return vs[0], nil
}

// Collection opens the cosine collection name of the given kind (see
// mnemo.CollectionConfig.Kind) in db (any backend) for this Space's
// vectors, creating it if needed. Another kind's collection is an error
// wrapping mnemo.ErrCollectionKind; one made by another embedder wraps
// embed.ErrMismatch; one that differs otherwise (another metric, say)
// wraps mnemo.ErrCollectionExists.
func (s *Space) Collection(ctx context.Context, db mnemo.Store, name, kind string) (mnemo.Collection, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", s.invalid)
	}
	old, err := db.Collection(ctx, name)
	if err != nil {
		old = nil // none yet (or unreadable: CreateCollection says which)
	}
	if old != nil && s.dflt && (old.Config().Kind == kind || old.Config().Kind == "") {
		// A memory stored with an older version of the offline default
		// keeps being searched with that version.
		if h, ok := embed.Offline(old.Config().Embedder); ok && h.Identity() != s.emb.Identity() {
			s.obs.Log().Info("collection made by an older offline embedder: searching it with that version",
				"collection", name, "embedder", h.Identity(), "default", s.emb.Identity())
			s.mu.Lock()
			s.emb, s.dflt = h, false
			s.mu.Unlock()
		}
	}
	emb := s.Embedder()
	id := emb.Identity()
	cfg := mnemo.CollectionConfig{Dimension: emb.Dimension(), Metric: mnemo.Cosine, Embedder: id}
	if old != nil {
		cfg.Text = old.Config().Text // an existing collection keeps its full-text settings
	}
	c, err := Open(ctx, db, name, kind, cfg)
	if errors.Is(err, mnemo.ErrCollectionExists) {
		if old == nil { // created by someone else since the lookup
			old, _ = db.Collection(ctx, name)
		}
		if old != nil && old.Config().Embedder != id {
			return nil, fmt.Errorf("%w: %q was built with %q, opened with %q", embed.ErrMismatch, name, old.Config().Embedder, id)
		}
	}
	return c, err
}

// Open opens the collection name of the given kind in db, creating it
// with cfg (and the kind) if needed. A collection of another kind is an
// error wrapping mnemo.ErrCollectionKind and is left as it is. One made
// before collections carried a kind (an empty Kind) is opened as this
// kind's, as it was before.
func Open(ctx context.Context, db mnemo.Store, name, kind string, cfg mnemo.CollectionConfig) (mnemo.Collection, error) {
	old, err := db.Collection(ctx, name)
	if err != nil {
		old = nil // none yet (or unreadable: CreateCollection says which)
	}
	cfg.Kind = kind
	if old != nil {
		switch have := old.Config().Kind; have {
		case kind:
		case "":
			cfg.Kind = "" // made before kinds: keep it as it is
		default:
			return nil, fmt.Errorf("%w: %q is a %s collection, opened as %s", mnemo.ErrCollectionKind, name, have, kind)
		}
	}
	c, err := db.CreateCollection(ctx, name, cfg)
	if errors.Is(err, mnemo.ErrCollectionExists) && old == nil {
		// Created by someone else since the lookup: say whose.
		if now, lerr := db.Collection(ctx, name); lerr == nil && now.Config().Kind != "" && now.Config().Kind != kind {
			return nil, fmt.Errorf("%w: %q is a %s collection, opened as %s", mnemo.ErrCollectionKind, name, now.Config().Kind, kind)
		}
	}
	return c, err
}

// OpenStore opens the store of an adapter's Open(dir, ...): the engine
// database in dir, owned by the returned Store, or InMemoryStore's when
// dir is empty.
func OpenStore(dir string, obs Observe) (mnemo.Store, error) {
	if dir == "" {
		return InMemoryStore(obs)
	}
	return engine.OpenStore(dir, &engine.Options{Logger: obs.Logger, Metrics: obs.Metrics})
}

// InMemoryStore opens the store of an adapter's Open(""): an in-memory
// engine database, logging and reporting to obs. The adapters' tests
// point it at a PostgreSQL server (MNEMO_MEMORY_BACKEND=postgres) to run
// the same behaviours there.
var InMemoryStore = func(obs Observe) (mnemo.Store, error) {
	return engine.OpenStore("", &engine.Options{InMemory: true, Logger: obs.Logger, Metrics: obs.Metrics})
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
// place in its conversation (GroupField): the position the collection's
// sequence gave it when it was stored, or the caller's own (a turn
// number, a time), so a search can lift the memories just before and
// after a match in the same conversation (mnemo.Spread). It is stripped
// from the metadata the adapters return.
const PosField = mnemo.PositionField

// GroupField is the metadata field in which the adapters keep the
// conversation a memory belongs to (its session within its scope): a
// search spreads a match's score only within it. A memory without one
// (a fact stored without a session) neither gives nor takes.
const GroupField = mnemo.GroupField

// Retrieval is how an adapter searches: the mode (empty: hybrid when the
// collection has a full-text index) and the neighbour weight (nil: the
// default; 0: off).
type Retrieval struct {
	Mode   mnemo.Mode
	Spread *float32
}

// Check validates r; a bad one wraps invalid.
func (r Retrieval) Check(invalid error) error {
	switch r.Mode {
	case mnemo.ModeAuto, mnemo.ModeHybrid, mnemo.ModeVector, mnemo.ModeText:
	default:
		return fmt.Errorf("%w: mode %q (want hybrid, vector or text)", invalid, r.Mode)
	}
	return CheckCutoff(invalid, "spread weight", r.Spread, 0, 1)
}

// Search runs text as a query over c: the query's vector and words fused
// (hybrid) unless r says otherwise, with neighbour spreading within
// GroupField over PosField (mnemo.DefaultSpread), k hits, the filter and the minimum similarity applied (nil:
// none). Text with nothing to embed is the empty sentinel (see Vector).
func (s *Space) Search(ctx context.Context, c mnemo.Collection, r Retrieval, text string, k int, filter *mnemo.Filter, minSim *float32) ([]mnemo.Hit, error) {
	q := mnemo.Query{Text: text, K: k, Filter: filter, MinSimilarity: minSim, Mode: r.Mode}
	hasText := !c.Config().Text.Disabled
	switch {
	case !hasText || q.Mode == mnemo.ModeVector:
		q.Mode, q.Text = mnemo.ModeVector, ""
	case q.Mode == mnemo.ModeAuto:
		q.Mode = mnemo.ModeHybrid
	}
	// Every mode carries the query's vector, text mode too: it ranks by
	// BM25 alone, but each hit then has its real distance, so the
	// adapters' scores and thresholds mean the same in every mode.
	v, err := s.Vector(ctx, "query", text)
	if err != nil {
		return nil, err
	}
	q.Vector = v
	if q.Mode != mnemo.ModeVector {
		q.Spread = mnemo.DefaultSpread()
		if r.Spread != nil {
			q.Spread.Weight = float64(*r.Spread)
		}
		if q.Spread.Weight == 0 {
			q.Spread = nil
		}
	}
	hits, err := c.Query(ctx, q)
	for i := range hits {
		delete(hits[i].Record.Metadata, PosField)
	}
	return hits, err
}

// Place returns the first of n consecutive positions for memories about
// to be stored in c, in order. A collection that keeps a sequence of
// positions (mnemo.Sequencer: both backends' collections do) reserves
// them, so that no two handles or processes writing c get the same
// position; when its sequence was never started (a collection written
// before collections kept one), Place starts it past the largest
// position stored, found by a scan: once per collection, since the
// sequence is stored. Another collection gets one more than the largest
// position stored, found by a scan the first time this Space is asked
// about it and counted in this Space from then on, so two Spaces writing
// one such collection repeat positions. Positions only order memories: a
// gap after a failed write costs nothing but a neighbour. A caller
// waiting for another one's scan gives up when ctx is done.
func (s *Space) Place(ctx context.Context, c mnemo.Collection, n int) (int64, error) {
	seq, ok := c.(mnemo.Sequencer)
	if !ok {
		return s.count(ctx, c, n)
	}
	first, err := seq.Reserve(ctx, n)
	if !errors.Is(err, mnemo.ErrSequenceUnset) {
		return first, err
	}
	if err := s.placing.Lock(ctx); err != nil {
		return 0, err
	}
	defer s.placing.Unlock()
	// Another call may have started the sequence while this one waited.
	if first, err = seq.Reserve(ctx, n); !errors.Is(err, mnemo.ErrSequenceUnset) {
		return first, err
	}
	next, err := mnemo.NextPosition(ctx, c)
	if err != nil {
		return 0, err
	}
	// Another writer (another Space or process) may start it at once:
	// Advance keeps the larger start, so neither repeats a position.
	if err := seq.Advance(ctx, next); err != nil {
		return 0, err
	}
	return seq.Reserve(ctx, n)
}

// count is Place for a collection without a sequence: the positions
// counted in this Space, from one more than the largest one stored.
func (s *Space) count(ctx context.Context, c mnemo.Collection, n int) (int64, error) {
	if err := s.placing.Lock(ctx); err != nil {
		return 0, err
	}
	defer s.placing.Unlock()
	next, ok := s.next[c.Name()]
	if !ok {
		var err error
		if next, err = mnemo.NextPosition(ctx, c); err != nil {
			return 0, err
		}
	}
	if s.next == nil {
		s.next = map[string]int64{}
	}
	s.next[c.Name()] = next + int64(n)
	return next, nil
}

// ScanPages calls fn with each page of c's records after the ID after, in
// ID order, until the last page or fn's first error (which it returns).
// fn may change c: the scan goes on from the last ID of the page it had.
func ScanPages(ctx context.Context, c mnemo.Collection, after string, fn func(page []mnemo.Record) error) error {
	for {
		page, next, err := c.Scan(ctx, after, scanPage)
		if err != nil {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// scanPage is how many records ScanPages asks for at a time.
const scanPage = 1000

// Bound is a collection an adapter holds by name: when the collection is
// dropped (by another handle on the same memory, or by an operator), the
// next call opens it again, empty, instead of failing for good. A Bound is
// safe for concurrent use by multiple goroutines.
type Bound struct {
	open func(context.Context) (mnemo.Collection, error)
	// OnReopen, when set, is called after the collection was opened
	// again, by the call that did it: an adapter that derives the
	// collection's content from other data marks it for rebuilding.
	OnReopen func()

	mu sync.Mutex // guards c
	c  mnemo.Collection
}

// Bind opens a collection with open and keeps it bound.
func Bind(ctx context.Context, open func(context.Context) (mnemo.Collection, error)) (*Bound, error) {
	c, err := open(ctx)
	if err != nil {
		return nil, err
	}
	return &Bound{open: open, c: c}, nil
}

// Get returns the collection as last opened.
func (b *Bound) Get() mnemo.Collection {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.c
}

// Do runs fn on the collection. When fn fails with
// mnemo.ErrCollectionNotFound (the collection was dropped since it was
// opened), Do opens it again and runs fn once more on the new one; fn
// must therefore change nothing when it fails.
func (b *Bound) Do(ctx context.Context, fn func(mnemo.Collection) error) error {
	c := b.Get()
	err := fn(c)
	if !errors.Is(err, mnemo.ErrCollectionNotFound) {
		return err
	}
	b.mu.Lock()
	if b.c == c { // not reopened by another call meanwhile
		nc, oerr := b.open(ctx)
		if oerr != nil {
			b.mu.Unlock()
			return errors.Join(err, oerr)
		}
		b.c = nc
		if b.OnReopen != nil {
			b.OnReopen()
		}
	}
	c = b.c
	b.mu.Unlock()
	return fn(c)
}

// Bind opens the collection name of the given kind for this Space's
// vectors (see Collection) and keeps it bound.
func (s *Space) Bind(ctx context.Context, db mnemo.Store, name, kind string) (*Bound, error) {
	return Bind(ctx, func(ctx context.Context) (mnemo.Collection, error) {
		return s.Collection(ctx, db, name, kind)
	})
}

// Query is Space.Search on a bound collection.
func (s *Space) Query(ctx context.Context, b *Bound, r Retrieval, text string, k int, filter *mnemo.Filter, minSim *float32) ([]mnemo.Hit, error) {
	var hits []mnemo.Hit
	err := b.Do(ctx, func(c mnemo.Collection) error {
		var err error
		hits, err = s.Search(ctx, c, r, text, k, filter, minSim)
		return err
	})
	return hits, err
}

// Insert stores rec in a bound collection at the next position (see
// Place), in rec's metadata under PosField, unless rec's metadata holds a
// position already (the caller's own), and returns its ID.
func (s *Space) Insert(ctx context.Context, b *Bound, rec mnemo.Record) (string, error) {
	return s.InsertIf(ctx, b, rec, nil)
}

// InsertIf is Insert when cond (nil: always) admits what rec's ID holds
// at the write (see UpsertIf); it returns "" and no error when cond
// refused. rec needs an ID when cond is set.
func (s *Space) InsertIf(ctx context.Context, b *Bound, rec mnemo.Record, cond func(exists bool, stored map[string]any) bool) (string, error) {
	var id string
	err := b.Do(ctx, func(c mnemo.Collection) error {
		r := rec
		if _, given := rec.Metadata[PosField]; !given {
			pos, err := s.Place(ctx, c, 1)
			if err != nil {
				return err
			}
			meta := make(map[string]any, len(rec.Metadata)+1)
			maps.Copy(meta, rec.Metadata)
			meta[PosField] = pos
			r.Metadata = meta
		}
		var err error
		var ids []string
		if cond == nil {
			ids, err = c.Upsert(ctx, r)
		} else {
			ids, err = UpsertIf(ctx, c, cond, r)
		}
		if err == nil && len(ids) == 1 {
			id = ids[0]
		}
		return err
	})
	return id, err
}

// UpsertIf writes recs to c where cond admits what their IDs hold, in one
// step when c is a mnemo.Conditional (both backends' collections are);
// on another collection (a test's wrapper, say) it reads, then writes,
// which another writer may come between. It returns the IDs written.
func UpsertIf(ctx context.Context, c mnemo.Collection, cond func(exists bool, stored map[string]any) bool, recs ...mnemo.Record) ([]string, error) {
	if cc, ok := c.(mnemo.Conditional); ok {
		return cc.UpsertIf(ctx, cond, recs...)
	}
	var keep []mnemo.Record
	for _, r := range recs {
		old, ok, err := c.Get(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if ok {
			m = old.Metadata
		}
		if cond(ok, m) {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		return []string{}, nil
	}
	return c.Upsert(ctx, keep...)
}

// DeleteIf deletes those of ids whose stored metadata cond admits, in one
// step when c is a mnemo.Conditional (see UpsertIf).
func DeleteIf(ctx context.Context, c mnemo.Collection, cond func(stored map[string]any) bool, ids ...string) (int, error) {
	if cc, ok := c.(mnemo.Conditional); ok {
		return cc.DeleteIf(ctx, cond, ids...)
	}
	var keep []string
	for _, id := range ids {
		old, ok, err := c.Get(ctx, id)
		if err != nil {
			return 0, err
		}
		if ok && cond(old.Metadata) {
			keep = append(keep, id)
		}
	}
	if len(keep) == 0 {
		return 0, nil
	}
	return c.Delete(ctx, keep...)
}
