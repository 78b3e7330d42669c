package vectorstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
	"github.com/mnemodb/mnemo/metrics"
)

// DefaultCollection is the collection of a Store whose Options name none.
const DefaultCollection = "documents"

// DefaultBatchSize is how many texts one Embed call gets when
// Options.BatchSize is zero (the HTTP embedders' own default batch).
const DefaultBatchSize = 128

// Kind marks the collections a Store creates (mnemo.CollectionConfig.Kind),
// so that another kind of memory of the same name is refused. A collection
// made without a kind (by an older version, or by hand) is used as it is.
const Kind = "vectorstore"

// Options configure a Store; nil means the defaults. New and Open copy
// them: changing them afterwards, from any goroutine, changes no Store.
type Options struct {
	// Collection the Store works on; default DefaultCollection.
	Collection string
	// Embedder embeds documents and queries; nil means the offline
	// hashing embedder, which matches words, not meaning (to choose it:
	// e, err := embed.NewHashing(0); DefaultEmbedder does the same).
	Embedder embed.Embedder
	// Mode is how a Search whose own Mode is empty retrieves:
	// mnemo.ModeHybrid (the default when empty), mnemo.ModeVector or
	// mnemo.ModeText. An unknown mode fails the search with
	// mnemo.ErrBadQuery.
	Mode mnemo.Mode
	// BatchSize is the most texts one Embed call gets; zero means
	// DefaultBatchSize.
	BatchSize int
	// Scope is the Store's scope (package scope): every document it adds
	// carries it (over any "mnemo.scope." keys of its metadata), and
	// Search, Delete and Count see only the documents that have it. nil
	// sees every document. WithScope changes it.
	Scope scope.Scope
	// Logger receives, for a Store that Open opens in a database of its
	// own, the engine's diagnostic messages. Default: discarded.
	Logger *slog.Logger
	// Metrics receives an embed event for every Embed call (one per
	// batch; see package metrics), and, for a Store that Open opens in
	// a database of its own, the engine's events; a database given to
	// New reports through the options it was opened with. Default nil:
	// off.
	Metrics metrics.Recorder
}

// Validate reports every problem with the options at once, each wrapping
// ErrInvalid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("%w: batch size %d, want 0 (the default) or more", ErrInvalid, o.BatchSize))
	}
	if err := o.Scope.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalid, err))
	}
	return errors.Join(errs...)
}

// Doc is a document to store: a text, its metadata and an optional ID. It
// is plain data, read by the call it is given to and not kept: it (and
// its metadata) may be reused once the call returns, but not changed
// while the call runs.
type Doc struct {
	// ID names the document in its collection; empty means a new UUID.
	// Adding a document under an ID that is stored replaces it.
	ID string
	// Text is what is embedded, indexed for words and stored.
	Text string
	// Metadata is stored beside the text, as mnemo.Record.Metadata.
	Metadata map[string]any
}

// Store is a collection of texts embedded by an embedder, in a mnemo.Store
// (any backend). It is safe for concurrent use by multiple goroutines.
type Store struct {
	db    mnemo.Store
	ownDB bool // Close closes db
	name  string
	emb   embed.Embedder
	mode  mnemo.Mode
	batch int
	scope scope.Scope   // nil: none
	where *mnemo.Filter // the scope's filter; nil without a scope
	obs   textvec.Observe
	open  *handles // shared with the Stores With returns
}

// New returns a Store on the collection opts name in db, which may be any
// backend (an engine database's Store, a PostgreSQL store). It opens no
// collection: the first write creates it, so ctx is not used yet. The
// caller keeps ownership of db: Close leaves it open, so one database can
// hold the documents and every other memory of an agent.
func New(ctx context.Context, db mnemo.Store, opts *Options) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Collection == "" {
		o.Collection = DefaultCollection
	}
	if o.BatchSize == 0 {
		o.BatchSize = DefaultBatchSize
	}
	e, err := DefaultEmbedder(o.Embedder)
	if err != nil {
		return nil, err
	}
	obs := textvec.Observe{Logger: o.Logger, Metrics: o.Metrics}
	st := &Store{db: db, name: o.Collection, emb: e, mode: o.Mode, batch: o.BatchSize, obs: obs, open: &handles{}}
	return st.scoped(o.Scope)
}

// scoped sets s's scope.
func (s *Store) scoped(sc scope.Scope) (*Store, error) {
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.scope, s.where = maps.Clone(sc), nil
	if len(sc) > 0 {
		f, err := mnemo.NewFilter(sc.Filter())
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		s.where = f
	}
	return s, nil
}

// WithScope returns a Store on the same collection and database with the
// scope sc (nil: none), sharing s's open collections; it does not own the
// database. A bad scope wraps ErrInvalid.
func (s *Store) WithScope(sc scope.Scope) (*Store, error) {
	w := *s
	w.ownDB = false
	return w.scoped(sc)
}

// Open opens (or creates) an embedded database in dir and returns a Store
// in it; an empty dir means in memory only. Close closes the database.
func Open(dir string, opts *Options) (*Store, error) {
	var obs textvec.Observe
	if opts != nil {
		obs = textvec.Observe{Logger: opts.Logger, Metrics: opts.Metrics}
	}
	db, err := textvec.OpenStore(dir, obs)
	if err != nil {
		return nil, err
	}
	s, err := New(context.Background(), db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownDB = true
	return s, nil
}

// Close closes the database if Open opened it; otherwise (and for a Store
// With returned) it does nothing.
func (s *Store) Close() error {
	if s.ownDB {
		return s.db.Close()
	}
	return nil
}

// DB returns the database the Store is in.
func (s *Store) DB() mnemo.Store { return s.db }

// Name returns the name of the Store's collection.
func (s *Store) Name() string { return s.name }

// Embedder returns the Store's embedder.
func (s *Store) Embedder() embed.Embedder { return s.emb }

// With returns a Store on the collection name of the same database, with
// the embedder e; an empty name or a nil e keeps s's. It shares s's
// options and open collections, and does not own the database. O(1).
func (s *Store) With(name string, e embed.Embedder) *Store {
	w := *s
	w.ownDB = false
	if name != "" {
		w.name = name
	}
	if e != nil {
		w.emb = e
	}
	return &w
}

// Add embeds the documents' texts and stores them, with their metadata
// and IDs, in the Store's collection (created if needed) in one atomic
// write, and returns their IDs in order (a new UUID for a document
// without one). No documents is no write. It is Records then Upsert.
func (s *Store) Add(ctx context.Context, docs []Doc) ([]string, error) {
	recs, err := s.Records(ctx, docs)
	if err != nil {
		return nil, err
	}
	return s.Upsert(ctx, recs...)
}

// Records checks the documents' texts, embeds them in batches and returns
// the records Add would store, for a caller that stores the same records
// in several collections (with Upsert). The caller owns the records.
func (s *Store) Records(ctx context.Context, docs []Doc) ([]mnemo.Record, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	vs, err := s.vectors(ctx, "document", texts)
	if err != nil {
		return nil, err
	}
	recs := make([]mnemo.Record, len(docs))
	for i, d := range docs {
		recs[i] = mnemo.Record{ID: d.ID, Vector: vs[i], Content: d.Text, Metadata: d.Metadata}
	}
	if s.where != nil {
		recs = s.stamp(recs)
	}
	return recs, nil
}

// Upsert stores records made by this Store's embedder (see Records) in
// its collection, created if needed, in one atomic write, and returns
// their IDs.
func (s *Store) Upsert(ctx context.Context, recs ...mnemo.Record) ([]string, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if s.where != nil {
		recs = s.stamp(recs)
	}
	var ids []string
	err := s.do(ctx, created, func(c mnemo.Collection) error {
		if s.where == nil {
			var err error
			ids, err = c.Upsert(ctx, recs...)
			return err
		}
		if err := s.owned(ctx, c, recs); err != nil {
			return err
		}
		// Checked again as it writes: a document another scope took in
		// between is left alone, and reported.
		var err error
		ids, err = textvec.UpsertIf(ctx, c, func(exists bool, stored map[string]any) bool {
			return !exists || s.where.Match(stored)
		}, recs...)
		if err == nil && len(ids) < len(recs) {
			err = fmt.Errorf("%w: %d of %d documents were taken by another scope meanwhile and left alone; the others were written", ErrInvalid, len(recs)-len(ids), len(recs))
		}
		return err
	})
	return ids, err
}

// stamp returns copies of recs carrying s's scope, over any scope keys
// of their own, each with an ID (a new UUID where it had none: a
// conditional write needs them).
func (s *Store) stamp(recs []mnemo.Record) []mnemo.Record {
	out := make([]mnemo.Record, len(recs))
	for i, r := range recs {
		if r.ID == "" {
			r.ID = uuid.NewString()
		}
		meta := make(map[string]any, len(r.Metadata)+len(s.scope))
		for k, v := range r.Metadata {
			if !strings.HasPrefix(k, scope.Prefix) {
				meta[k] = v
			}
		}
		maps.Copy(meta, s.scope.Metadata())
		r.Metadata = meta
		out[i] = r
	}
	return out
}

// owned refuses, in a scoped Store, to replace a document of another
// scope (ErrInvalid). O(records) lookups.
func (s *Store) owned(ctx context.Context, c mnemo.Collection, recs []mnemo.Record) error {
	if s.where == nil {
		return nil
	}
	for _, r := range recs {
		if r.ID == "" {
			continue
		}
		old, ok, err := c.Get(ctx, r.ID)
		if err != nil {
			return err
		}
		if ok && !s.where.Match(old.Metadata) {
			return fmt.Errorf("%w: document %q belongs to another scope", ErrInvalid, r.ID)
		}
	}
	return nil
}

// Search embeds q.Text and returns up to q.K hits, best first (see
// Search), each with its record's ID, content and metadata and its
// cosine similarity to the query. A collection nothing was written to has
// none. The caller owns the hits.
func (s *Store) Search(ctx context.Context, q Search) ([]mnemo.Hit, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	v, err := s.queryVector(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	if q.Mode == mnemo.ModeAuto {
		q.Mode = s.mode
	}
	var hits []mnemo.Hit
	err = s.do(ctx, embedded, func(c mnemo.Collection) error {
		q := q
		if q.Mode == mnemo.ModeAuto && c.Config().Text.Disabled {
			q.Mode = mnemo.ModeVector
		}
		mq := q.Query(v)
		if s.where != nil {
			mq.Filter = mnemo.AndFilters(s.where, mq.Filter)
		}
		var err error
		hits, err = c.Query(ctx, mq)
		return err
	})
	return hits, err
}

// Delete removes the documents with the given IDs and returns how many
// existed; absent IDs, and a collection nothing was written to, are not
// an error. It involves no vectors, so any embedder may delete.
func (s *Store) Delete(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	err := s.do(ctx, existing, func(c mnemo.Collection) error {
		ids := ids
		var err error
		if s.where != nil { // only the scope's own, checked as it deletes
			n, err = textvec.DeleteIf(ctx, c, s.where.Match, ids...)
			return err
		}
		n, err = c.Delete(ctx, ids...)
		return err
	})
	return n, err
}

// Count returns the number of documents (0 in a collection nothing was
// written to); a scoped Store counts its scope's, O(documents).
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int
	err := s.do(ctx, existing, func(c mnemo.Collection) error {
		if s.where == nil {
			var err error
			n, err = c.Count(ctx)
			return err
		}
		n = 0 // a scoped Store counts its own: a scan
		return textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
			for _, r := range page {
				if s.where.Match(r.Metadata) {
					n++
				}
			}
			return nil
		})
	})
	return n, err
}

// Collection opens the Store's collection, creating it if needed, and
// checks that its vectors are the Store's embedder's (embed.ErrMismatch)
// and that it is not another kind of memory's (mnemo.ErrCollectionKind).
func (s *Store) Collection(ctx context.Context) (mnemo.Collection, error) {
	return s.handle(ctx, created)
}

// CheckText reports whether text can be embedded and searched: it must
// hold a character other than white space (ErrEmpty) and be valid UTF-8
// (ErrInvalid).
func CheckText(text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w: no text", ErrEmpty)
	}
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: text is not valid UTF-8", ErrInvalid)
	}
	return nil
}

// vectors checks texts and embeds them in batches; what names them in
// errors. The caller owns the vectors.
func (s *Store) vectors(ctx context.Context, what string, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if err := CheckText(t); err != nil {
			return nil, fmt.Errorf("%s %d: %w", what, i, err)
		}
	}
	vs := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += s.batch {
		batch := texts[lo:min(lo+s.batch, len(texts))]
		got, err := s.obs.Embed(ctx, s.emb, s.name, batch)
		if err != nil {
			return nil, err
		}
		if len(got) != len(batch) {
			return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrEmbedding, s.emb.Identity(), len(got), len(batch))
		}
		for i, v := range got {
			if err := s.check(v); err != nil {
				return nil, fmt.Errorf("%s %d: %w", what, lo+i, err)
			}
		}
		vs = append(vs, got...)
	}
	return vs, nil
}

// queryVector checks and embeds a query, with EmbedQuery when the
// embedder has it.
func (s *Store) queryVector(ctx context.Context, text string) ([]float32, error) {
	if err := CheckText(text); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	q, ok := s.emb.(QueryEmbedder)
	if !ok {
		vs, err := s.vectors(ctx, "query", []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	}
	v, err := q.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	if err := s.check(v); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return v, nil
}

// check reports whether v can be stored or searched in a collection of
// the Store's embedder: the zero vector is ErrEmpty (the text had nothing
// to embed), and what mnemo.CheckVector refuses is ErrEmbedding.
func (s *Store) check(v []float32) error {
	if len(v) == s.emb.Dimension() && embed.IsZero(v) {
		return fmt.Errorf("%w: nothing to embed (the embedder maps it to the zero vector)", ErrEmpty)
	}
	return usable(mnemo.CollectionConfig{Dimension: s.emb.Dimension(), Metric: mnemo.Cosine}, v)
}

// usable wraps what mnemo.CheckVector refuses with ErrEmbedding.
func usable(cfg mnemo.CollectionConfig, v []float32) error {
	if err := mnemo.CheckVector(cfg, v); err != nil {
		return fmt.Errorf("%w: %w", ErrEmbedding, err)
	}
	return nil
}

// handles caches the collections a Store (and the Stores With returns)
// opened, by name, so that a call costs no catalog lookup. It is safe for
// concurrent use by multiple goroutines.
type handles struct {
	mu sync.Mutex
	m  map[string]mnemo.Collection // protected by mu
}

func (h *handles) get(name string) mnemo.Collection {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[name]
}

// put caches c under name, unless another call did first: it returns the
// collection cached.
func (h *handles) put(name string, c mnemo.Collection) mnemo.Collection {
	h.mu.Lock()
	defer h.mu.Unlock()
	if old, ok := h.m[name]; ok {
		return old
	}
	if h.m == nil {
		h.m = map[string]mnemo.Collection{}
	}
	h.m[name] = c
	return c
}

// forget drops c from the cache, if it is still there.
func (h *handles) forget(name string, c mnemo.Collection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[name] == c {
		delete(h.m, name)
	}
}

// need is what a call needs of the Store's collection.
type need uint8

const (
	existing need = iota // one that exists (none: the call does nothing); vectors are not involved
	embedded             // one that exists, made by the Store's embedder
	created              // one made by the Store's embedder, created if needed
)

// do runs fn on the Store's collection, as n says; when it does not
// exist and n does not create it, fn is not run. When fn fails because
// the collection was dropped since it was opened, do opens it again and
// runs fn once more; fn must therefore change nothing when it fails.
func (s *Store) do(ctx context.Context, n need, fn func(mnemo.Collection) error) error {
	for retried := false; ; retried = true {
		c, err := s.handle(ctx, n)
		if err != nil || c == nil {
			return err
		}
		err = fn(c)
		if retried || !errors.Is(err, mnemo.ErrCollectionNotFound) {
			return err
		}
		s.open.forget(s.name, c)
	}
}

// handle returns the Store's collection, from the cache or opened (and
// created when n says; nil when it does not and there is none), after
// checking, when n involves vectors, that the Store's embedder made its
// vectors.
func (s *Store) handle(ctx context.Context, n need) (mnemo.Collection, error) {
	c := s.open.get(s.name)
	if c == nil {
		var err error
		if c, err = s.lookup(ctx, n == created); err != nil || c == nil {
			return nil, err
		}
		c = s.open.put(s.name, c)
	}
	if got, want := c.Config().Embedder, s.emb.Identity(); n != existing && got != want {
		return nil, fmt.Errorf("%w: collection %q was built with %q, used with %q", embed.ErrMismatch, s.name, got, want)
	}
	return c, nil
}

// lookup opens the Store's collection in the database, creating it when
// create is set (nil without create when there is none). Another kind of
// memory's collection is an error wrapping mnemo.ErrCollectionKind.
func (s *Store) lookup(ctx context.Context, create bool) (mnemo.Collection, error) {
	c, err := s.db.Collection(ctx, s.name)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		if !create {
			return nil, nil
		}
		cfg := mnemo.CollectionConfig{Dimension: s.emb.Dimension(), Metric: mnemo.Cosine, Embedder: s.emb.Identity(), Kind: Kind}
		c, err = s.db.CreateCollection(ctx, s.name, cfg)
		if errors.Is(err, mnemo.ErrCollectionExists) {
			// Another handle created it meanwhile, with another config:
			// its kind and embedder say whether it can be used.
			c, err = s.db.Collection(ctx, s.name)
		}
	}
	if err != nil {
		return nil, err
	}
	if k := c.Config().Kind; k != "" && k != Kind {
		return nil, fmt.Errorf("%w: %q is a %s collection, used as a %s one", mnemo.ErrCollectionKind, s.name, k, Kind)
	}
	return c, nil
}
