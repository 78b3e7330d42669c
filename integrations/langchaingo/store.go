package mnemo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// DefaultCollection is the collection of the default namespace.
const DefaultCollection = "langchaingo"

// Options configure a Store; nil means the defaults.
type Options struct {
	// Collection holds the documents of calls without a namespace;
	// default DefaultCollection.
	Collection string
	// Embedder embeds documents and queries; default embed.NewHashing(0),
	// the offline embedder. A langchaingo embedder goes through
	// NewForeignEmbedder.
	Embedder embed.Embedder
	// Mode is how SimilaritySearch retrieves: mnemo.ModeHybrid (the
	// default when empty: the query's words, by BM25 over the
	// collection's full-text index, fused with its embedding),
	// mnemo.ModeVector or mnemo.ModeText. langchaingo's options have no
	// place for it, so it is the store's.
	Mode mnemo.Mode
}

// Store is a langchaingo vector store on a mnemo database. It is safe for
// concurrent use by multiple goroutines.
type Store struct {
	db         *engine.DB
	ownDB      bool
	collection string
	emb        embed.Embedder
	mode       mnemo.Mode
}

var _ vectorstores.VectorStore = (*Store)(nil)

// NewStore returns a store in db. The caller keeps ownership of db: Close
// leaves it open, so one database can hold the documents, the chat
// history and every other memory of an agent.
func NewStore(db *engine.DB, opts *Options) (*Store, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Collection == "" {
		o.Collection = DefaultCollection
	}
	if o.Embedder == nil {
		h, err := embed.NewHashing(0)
		if err != nil {
			return nil, err
		}
		o.Embedder = h
	}
	return &Store{db: db, collection: o.Collection, emb: o.Embedder, mode: o.Mode}, nil
}

// OpenStore opens (or creates) a database in dir and returns a store in it;
// an empty dir means in memory only. Close closes the database.
func OpenStore(dir string, opts *Options) (*Store, error) {
	db, err := engine.Open(dir, &engine.Options{InMemory: dir == ""})
	if err != nil {
		return nil, err
	}
	s, err := NewStore(db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.ownDB = true
	return s, nil
}

// Close closes the database if OpenStore opened it; otherwise it does
// nothing.
func (s *Store) Close() error {
	if s.ownDB {
		return s.db.Close()
	}
	return nil
}

// DB returns the store's database.
func (s *Store) DB() *engine.DB { return s.db }

// call is what the options of one call resolve to.
type call struct {
	collection string
	emb        embed.Embedder
	filter     *mnemo.Filter
	threshold  *float32
	dedup      func(context.Context, schema.Document) bool
}

func (s *Store) resolve(options []vectorstores.Option) (call, error) {
	var o vectorstores.Options
	for _, opt := range options {
		opt(&o)
	}
	c := call{collection: s.collection, emb: s.emb, dedup: o.Deduplicater}
	if o.NameSpace != "" {
		c.collection = o.NameSpace
	}
	if o.Embedder != nil {
		e, err := asMnemo(o.Embedder)
		if err != nil {
			return c, err
		}
		c.emb = e
	}
	t := float64(o.ScoreThreshold)
	if math.IsNaN(t) || t < 0 || t > 1 {
		return c, fmt.Errorf("%w: score threshold %v, want 0..1", ErrInvalid, o.ScoreThreshold)
	}
	if t > 0 {
		c.threshold = &o.ScoreThreshold
	}
	f, err := filterOf(o.Filters)
	if err != nil {
		return c, err
	}
	c.filter = f
	return c, nil
}

// filterOf turns vectorstores.WithFilters' value into an engine filter:
// an *mnemo.Filter, its JSON text, or a Go value that encodes to it (a
// map[string]any is read directly when it holds only the types
// mnemo.NewFilter takes, and through JSON otherwise).
func filterOf(v any) (*mnemo.Filter, error) {
	var (
		f   *mnemo.Filter
		err error
	)
	switch v := v.(type) {
	case nil:
		return nil, nil
	case *mnemo.Filter:
		return v, nil
	case string:
		f, err = mnemo.ParseFilter(v)
	case json.RawMessage:
		f, err = mnemo.ParseFilter(string(v))
	default:
		if m, ok := v.(map[string]any); ok {
			if f, err = mnemo.NewFilter(m); err == nil {
				return f, nil
			}
		}
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			f, err = mnemo.ParseFilter(string(b))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: filter: %w", ErrInvalid, err)
	}
	return f, nil
}

// open returns the collection for c, creating it when create is set; a
// missing one is nil without create.
func (s *Store) open(ctx context.Context, c call, create bool) (*engine.Collection, error) {
	id := c.emb.Identity()
	col, err := s.db.Collection(c.collection)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		if !create {
			return nil, nil
		}
		cfg := mnemo.CollectionConfig{Dimension: c.emb.Dimension(), Metric: mnemo.Cosine, Embedder: id}
		col, err = s.db.CreateCollection(ctx, c.collection, cfg)
	}
	if err != nil {
		return nil, err
	}
	if got := col.Config().Embedder; got != id {
		return nil, fmt.Errorf("%w: collection %q was built with %q, used with %q", embed.ErrMismatch, c.collection, got, id)
	}
	return col, nil
}

// AddDocuments embeds each document's PageContent and stores it with its
// metadata in the namespace's collection (created on first use), in one
// atomic, durable write, and returns the new records' IDs. Documents the
// vectorstores.WithDeduplicater function reports as present are skipped
// (and get no ID). Score thresholds and filters are not add options.
func (s *Store) AddDocuments(ctx context.Context, docs []schema.Document, options ...vectorstores.Option) ([]string, error) {
	c, err := s.resolve(options)
	if err != nil {
		return nil, err
	}
	if c.threshold != nil || c.filter != nil {
		return nil, fmt.Errorf("%w: AddDocuments takes no score threshold or filter", ErrInvalid)
	}
	texts := make([]string, 0, len(docs))
	kept := make([]schema.Document, 0, len(docs))
	for i, d := range docs {
		if err := checkText(d.PageContent); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if c.dedup != nil && c.dedup(ctx, d) {
			continue
		}
		texts = append(texts, d.PageContent)
		kept = append(kept, d)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	vs, err := c.emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vs), len(texts))
	}
	recs := make([]mnemo.Record, len(kept))
	for i, d := range kept {
		if embed.IsZero(vs[i]) {
			return nil, fmt.Errorf("document %d: %w: nothing to embed (the embedder maps it to the zero vector)", i, ErrEmpty)
		}
		recs[i] = mnemo.Record{Vector: vs[i], Content: d.PageContent, Metadata: d.Metadata}
	}
	col, err := s.open(ctx, c, true)
	if err != nil {
		return nil, err
	}
	return col.Upsert(ctx, recs...)
}

// SimilaritySearch returns up to numDocuments documents nearest to query,
// best first, each with its Score (cosine similarity, 1 - d) and its
// metadata. A namespace nothing was added to has no documents.
func (s *Store) SimilaritySearch(ctx context.Context, query string, numDocuments int, options ...vectorstores.Option) ([]schema.Document, error) {
	if numDocuments < 1 {
		return nil, fmt.Errorf("%w: numDocuments %d, want at least 1", ErrInvalid, numDocuments)
	}
	c, err := s.resolve(options)
	if err != nil {
		return nil, err
	}
	if c.dedup != nil {
		return nil, fmt.Errorf("%w: SimilaritySearch takes no deduplicater", ErrInvalid)
	}
	if err := checkText(query); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	v, err := embedQuery(ctx, c.emb, query)
	if err != nil {
		return nil, err
	}
	col, err := s.open(ctx, c, false)
	if err != nil || col == nil {
		return nil, err
	}
	hits, err := col.Query(ctx, buildQuery(search{text: query, vector: v, k: numDocuments, filter: c.filter, threshold: c.threshold, mode: s.mode}))
	if err != nil {
		return nil, err
	}
	docs := make([]schema.Document, len(hits))
	for i, h := range hits {
		docs[i] = schema.Document{PageContent: h.Record.Content, Metadata: h.Record.Metadata, Score: h.Similarity}
	}
	return docs, nil
}

// search is one retrieval request, before it becomes an engine query.
type search struct {
	text      string // the query text, as the user wrote it
	vector    []float32
	k         int
	filter    *mnemo.Filter
	threshold *float32 // minimum score, nil for none
	mode      mnemo.Mode
}

// buildQuery is the one place that decides how the store retrieves: the
// query's words and its embedding fused (hybrid, the default: the
// collection's full-text index and its vectors, see mnemo.Query), or one
// side alone (mode text or vector), restricted by the filter and cut at
// the minimum similarity. Every hit carries its cosine similarity,
// whichever side found it, so the score keeps its meaning in every mode.
func buildQuery(s search) mnemo.Query {
	q := mnemo.Query{Vector: s.vector, Text: s.text, Mode: s.mode, K: s.k, Filter: s.filter}
	if s.mode == mnemo.ModeVector {
		q.Text = ""
	}
	q.MinSimilarity = s.threshold
	return q
}

// Delete removes the documents with the given IDs from the namespace's
// collection and returns how many existed; absent IDs are not an error.
// Only vectorstores.WithNameSpace applies.
func (s *Store) Delete(ctx context.Context, ids []string, options ...vectorstores.Option) (int, error) {
	c, err := s.resolve(options)
	if err != nil {
		return 0, err
	}
	col, err := s.db.Collection(c.collection)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return col.Delete(ctx, ids...)
}

// embedQuery embeds a query, with EmbedQuery when the embedder has one
// (some models embed queries and documents differently).
func embedQuery(ctx context.Context, e embed.Embedder, text string) ([]float32, error) {
	var v []float32
	if q, ok := e.(embeddings.Embedder); ok {
		var err error
		if v, err = q.EmbedQuery(ctx, text); err != nil {
			return nil, err
		}
	} else {
		vs, err := e.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		if len(vs) != 1 {
			return nil, fmt.Errorf("%w: %d vectors for 1 text", ErrEmbedding, len(vs))
		}
		v = vs[0]
	}
	if embed.IsZero(v) {
		return nil, fmt.Errorf("query: %w: nothing to embed (the embedder maps it to the zero vector)", ErrEmpty)
	}
	return v, nil
}

func checkText(text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("%w: no text", ErrEmpty)
	}
	if !utf8.ValidString(text) {
		return fmt.Errorf("%w: text is not valid UTF-8", ErrInvalid)
	}
	return nil
}
