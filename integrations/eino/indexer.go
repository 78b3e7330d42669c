package mnemo

import (
	"context"
	"fmt"
	"maps"

	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
)

// DefaultCollection is the collection of an Indexer or Retriever whose
// config names none.
const DefaultCollection = "eino"

// IndexerConfig configures an Indexer; nil means the defaults.
type IndexerConfig struct {
	// Collection the documents go to; default DefaultCollection.
	Collection string
	// Embedder embeds the documents' Content; default embed.NewHashing(0),
	// the offline embedder. An Eino embedder goes through
	// NewForeignEmbedder.
	Embedder embed.Embedder
}

// Indexer stores Eino documents in a mnemo database (any backend). It is
// safe for concurrent use by multiple goroutines.
type Indexer struct {
	docs *vectorstore.Store
}

var _ indexer.Indexer = (*Indexer)(nil)

// NewIndexer returns an indexer into db: an engine database the caller
// has open (engine.DB.Store) or a server (package postgres). It creates
// no collection (the first Store does), so ctx is not used yet. The
// caller keeps ownership of db.
func NewIndexer(ctx context.Context, db mnemo.Store, cfg *IndexerConfig) (*Indexer, error) {
	var c IndexerConfig
	if cfg != nil {
		c = *cfg
	}
	docs, err := vectorstore.New(ctx, db, &vectorstore.Options{Collection: collection(c.Collection), Embedder: c.Embedder})
	if err != nil {
		return nil, err
	}
	return &Indexer{docs: docs}, nil
}

// collection returns name, or DefaultCollection when it is empty.
func collection(name string) string {
	if name == "" {
		return DefaultCollection
	}
	return name
}

// reserved are Eino's metadata keys that are not stored: the score belongs
// to one retrieval, and the vectors are the record's own.
var reserved = []string{"_score", "_dense_vector", "_sparse_vector"}

// Store embeds each document's Content and upserts the documents, by ID,
// in one atomic, durable write per collection, and returns their IDs (a
// new UUID for a document without one). indexer.WithSubIndexes stores them
// in each named collection instead of the configured one (one write each,
// the documents embedded once); indexer.WithEmbedding replaces the
// embedder for this call.
func (ix *Indexer) Store(ctx context.Context, docs []*schema.Document, opts ...indexer.Option) ([]string, error) {
	o := indexer.GetCommonOptions(nil, opts...)
	e, err := vectorstore.AsEmbedder(o.Embedding)
	if err != nil {
		return nil, err
	}
	store := ix.docs.With("", e)
	names := o.SubIndexes
	if len(names) == 0 {
		names = []string{store.Name()}
	}
	vdocs := make([]vectorstore.Doc, len(docs))
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("%w: document %d is nil", ErrInvalid, i)
		}
		vdocs[i] = vectorstore.Doc{ID: d.ID, Text: d.Content, Metadata: stored(d.MetaData)}
	}
	recs, err := store.Records(ctx, vdocs)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	var ids []string
	for _, name := range names {
		if ids, err = store.With(name, nil).Upsert(ctx, recs...); err != nil {
			return nil, err
		}
		for i := range recs { // every collection gets the same IDs
			recs[i].ID = ids[i]
		}
	}
	return ids, nil
}

// stored returns the metadata to store of a document: meta without the
// reserved keys (a copy when it has any).
func stored(meta map[string]any) map[string]any {
	for _, k := range reserved {
		if _, ok := meta[k]; ok {
			meta = maps.Clone(meta)
			for _, k := range reserved {
				delete(meta, k)
			}
			return meta
		}
	}
	return meta
}

// GetType names the component in Eino's callbacks.
func (ix *Indexer) GetType() string { return "Mnemo" }
