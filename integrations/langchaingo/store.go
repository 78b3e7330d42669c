package mnemo

import (
	"context"
	"fmt"
	"math"

	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
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

// documents returns the options of the vectorstore.Store behind a Store.
func (o *Options) documents() *vectorstore.Options {
	var v vectorstore.Options
	if o != nil {
		v = vectorstore.Options{Collection: o.Collection, Embedder: o.Embedder, Mode: o.Mode}
	}
	if v.Collection == "" {
		v.Collection = DefaultCollection
	}
	return &v
}

// Store is a langchaingo vector store on a mnemo database (any backend).
// It is safe for concurrent use by multiple goroutines.
type Store struct {
	docs *vectorstore.Store
}

var _ vectorstores.VectorStore = (*Store)(nil)

// NewStore returns a store in db: an engine database the caller has open
// (engine.DB.Store) or a server (package postgres). It creates no
// collection: a namespace's is created by its first AddDocuments, so ctx
// is not used yet. The caller keeps ownership of db: Close leaves it open,
// so one database can hold the documents, the chat history and every
// other memory of an agent.
func NewStore(ctx context.Context, db mnemo.Store, opts *Options) (*Store, error) {
	docs, err := vectorstore.New(ctx, db, opts.documents())
	if err != nil {
		return nil, err
	}
	return &Store{docs: docs}, nil
}

// OpenStore opens (or creates) an embedded database in dir and returns a
// store in it; an empty dir means in memory only. Close closes the
// database.
func OpenStore(dir string, opts *Options) (*Store, error) {
	docs, err := vectorstore.Open(dir, opts.documents())
	if err != nil {
		return nil, err
	}
	return &Store{docs: docs}, nil
}

// Close closes the database if OpenStore opened it; otherwise it does
// nothing.
func (s *Store) Close() error { return s.docs.Close() }

// DB returns the store's database.
func (s *Store) DB() mnemo.Store { return s.docs.DB() }

// call is what the options of one call resolve to.
type call struct {
	docs      *vectorstore.Store // the namespace's collection, with the call's embedder
	filter    *mnemo.Filter
	threshold *float64 // nil for none
	dedup     func(context.Context, schema.Document) bool
}

func (s *Store) resolve(options []vectorstores.Option) (call, error) {
	var o vectorstores.Options
	for _, opt := range options {
		opt(&o)
	}
	e, err := vectorstore.AsEmbedder(o.Embedder)
	if err != nil {
		return call{}, err
	}
	c := call{docs: s.docs.With(o.NameSpace, e), dedup: o.Deduplicater}
	t := float64(o.ScoreThreshold)
	if math.IsNaN(t) || t < 0 || t > 1 {
		return c, fmt.Errorf("%w: score threshold %v, want 0..1", ErrInvalid, o.ScoreThreshold)
	}
	if t > 0 {
		c.threshold = &t
	}
	c.filter, err = vectorstore.FilterOf(o.Filters)
	return c, err
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
	kept := make([]vectorstore.Doc, 0, len(docs))
	for i, d := range docs {
		if err := vectorstore.CheckText(d.PageContent); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if c.dedup != nil && c.dedup(ctx, d) {
			continue
		}
		kept = append(kept, vectorstore.Doc{Text: d.PageContent, Metadata: d.Metadata})
	}
	return c.docs.Add(ctx, kept)
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
	hits, err := c.docs.Search(ctx, vectorstore.Search{Text: query, K: numDocuments, MinScore: c.threshold, Filter: c.filter})
	if err != nil {
		return nil, err
	}
	docs := make([]schema.Document, len(hits))
	for i, h := range hits {
		docs[i] = schema.Document{PageContent: h.Record.Content, Metadata: h.Record.Metadata, Score: h.Similarity}
	}
	return docs, nil
}

// Delete removes the documents with the given IDs from the namespace's
// collection and returns how many existed; absent IDs are not an error.
// Only vectorstores.WithNameSpace applies.
func (s *Store) Delete(ctx context.Context, ids []string, options ...vectorstores.Option) (int, error) {
	c, err := s.resolve(options)
	if err != nil {
		return 0, err
	}
	return c.docs.Delete(ctx, ids...)
}
