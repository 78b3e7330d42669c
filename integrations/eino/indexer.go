package mnemo

import (
	"context"
	"fmt"
	"maps"

	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// IndexerConfig configures an Indexer; nil means the defaults.
type IndexerConfig struct {
	// Collection the documents go to; default DefaultCollection.
	Collection string
	// Embedder embeds the documents' Content; default embed.NewHashing(0),
	// the offline embedder. An Eino embedder goes through
	// NewForeignEmbedder.
	Embedder embed.Embedder
}

// Indexer stores Eino documents in a mnemo database. It is safe for
// concurrent use by multiple goroutines.
type Indexer struct {
	db         *engine.DB
	collection string
	emb        embed.Embedder
}

var _ indexer.Indexer = (*Indexer)(nil)

// NewIndexer returns an indexer into db; the caller keeps ownership of db.
func NewIndexer(_ context.Context, db *engine.DB, cfg *IndexerConfig) (*Indexer, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	var c IndexerConfig
	if cfg != nil {
		c = *cfg
	}
	if c.Collection == "" {
		c.Collection = DefaultCollection
	}
	e, err := defaultEmbedder(c.Embedder)
	if err != nil {
		return nil, err
	}
	return &Indexer{db: db, collection: c.Collection, emb: e}, nil
}

// reserved are Eino's metadata keys that are not stored: the score belongs
// to one retrieval, and the vectors are the record's own.
var reserved = []string{"_score", "_dense_vector", "_sparse_vector"}

// Store embeds each document's Content and upserts the documents, by ID,
// in one atomic, durable write per collection, and returns their IDs (a
// new UUID for a document without one). indexer.WithSubIndexes stores them
// in each named collection instead of the configured one (one write each);
// indexer.WithEmbedding replaces the embedder for this call.
func (ix *Indexer) Store(ctx context.Context, docs []*schema.Document, opts ...indexer.Option) ([]string, error) {
	o := indexer.GetCommonOptions(nil, opts...)
	e := ix.emb
	if o.Embedding != nil {
		var err error
		if e, err = asMnemo(o.Embedding); err != nil {
			return nil, err
		}
	}
	names := o.SubIndexes
	if len(names) == 0 {
		names = []string{ix.collection}
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("%w: document %d is nil", ErrInvalid, i)
		}
		texts[i] = d.Content
	}
	if len(docs) == 0 {
		return nil, nil
	}
	vs, err := embedTexts(ctx, e, "document", texts)
	if err != nil {
		return nil, err
	}
	recs := make([]mnemo.Record, len(docs))
	for i, d := range docs {
		meta := d.MetaData
		for _, k := range reserved {
			if _, ok := meta[k]; ok {
				meta = maps.Clone(meta)
				for _, k := range reserved {
					delete(meta, k)
				}
				break
			}
		}
		recs[i] = mnemo.Record{ID: d.ID, Vector: vs[i], Content: d.Content, Metadata: meta}
	}
	var ids []string
	for _, name := range names {
		c, err := collection(ctx, ix.db, name, e, true)
		if err != nil {
			return nil, err
		}
		if ids, err = c.Upsert(ctx, recs...); err != nil {
			return nil, err
		}
		for i := range recs { // every collection gets the same IDs
			recs[i].ID = ids[i]
		}
	}
	return ids, nil
}

// GetType names the component in Eino's callbacks.
func (ix *Indexer) GetType() string { return "Mnemo" }
