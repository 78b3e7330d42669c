package mnemo

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
)

// DefaultTopK is the number of documents a Retrieve returns when neither
// the config nor the call says.
const DefaultTopK = 4

// RetrieverConfig configures a Retriever; nil means the defaults.
type RetrieverConfig struct {
	// Collection searched; default DefaultCollection.
	Collection string
	// Embedder embeds queries; it must be the one the collection's
	// documents were embedded with. Default embed.NewHashing(0).
	Embedder embed.Embedder
	// TopK is the default number of documents; default DefaultTopK.
	TopK int
	// ScoreThreshold, when set, is the default minimum score, in [-1, 1].
	ScoreThreshold *float64
	// Mode is the default retrieval (WithMode sets it per call):
	// mnemo.ModeHybrid (the default when empty: the query's words, by
	// BM25 over the collection's full-text index, fused with its
	// embedding), mnemo.ModeVector or mnemo.ModeText.
	Mode mnemo.Mode
}

// Retriever finds the Eino documents nearest to a query in a mnemo
// database (any backend). It is safe for concurrent use by multiple
// goroutines.
type Retriever struct {
	docs      *vectorstore.Store
	topK      int
	threshold *float64
	mode      mnemo.Mode
}

var _ retriever.Retriever = (*Retriever)(nil)

// NewRetriever returns a retriever over db: an engine database the caller
// has open (engine.DB.Store) or a server (package postgres). It opens no
// collection (each Retrieve looks its own up), so ctx is not used yet.
// The caller keeps ownership of db.
func NewRetriever(ctx context.Context, db mnemo.Store, cfg *RetrieverConfig) (*Retriever, error) {
	var c RetrieverConfig
	if cfg != nil {
		c = *cfg
	}
	if c.TopK == 0 {
		c.TopK = DefaultTopK
	}
	if err := (vectorstore.Search{K: c.TopK, MinScore: c.ScoreThreshold}).Check(); err != nil {
		return nil, err
	}
	docs, err := vectorstore.New(ctx, db, &vectorstore.Options{Collection: collection(c.Collection), Embedder: c.Embedder})
	if err != nil {
		return nil, err
	}
	return &Retriever{docs: docs, topK: c.TopK, threshold: c.ScoreThreshold, mode: c.Mode}, nil
}

// Options are the Retriever's own call options, set with WithFilter.
type Options struct {
	// Filter restricts the documents to those whose metadata it admits.
	Filter *mnemo.Filter
	// Mode overrides RetrieverConfig.Mode for the call.
	Mode mnemo.Mode
	// err records a filter that did not parse.
	err error
}

// WithMode chooses how a Retrieve retrieves: mnemo.ModeHybrid,
// mnemo.ModeVector or mnemo.ModeText (see RetrieverConfig.Mode).
func WithMode(mode mnemo.Mode) retriever.Option {
	return retriever.WrapImplSpecificOptFn(func(o *Options) { o.Mode = mode })
}

// WithFilter restricts a Retrieve to documents whose metadata the filter
// admits. filter is Chroma's where-syntax as JSON text
// (`{"year": {"$gte": 2020}}`), a map[string]any of the same shape (or
// any Go value that encodes to such a JSON object), or an *mnemo.Filter
// (see vectorstore.FilterOf); a malformed one makes Retrieve fail with
// ErrInvalid.
func WithFilter(filter any) retriever.Option {
	return retriever.WrapImplSpecificOptFn(func(o *Options) {
		o.Filter, o.err = vectorstore.FilterOf(filter)
	})
}

// Retrieve embeds query and returns the nearest documents, best first,
// each with its ID, Content, MetaData and score (Document.Score: the
// cosine similarity). It honours retriever.WithTopK, WithScoreThreshold
// (a document exactly at it is kept), WithSubIndex or WithIndex (the
// collection searched; one nothing was stored in has no documents),
// WithEmbedding, and this package's WithFilter. WithDSLInfo is refused.
func (r *Retriever) Retrieve(ctx context.Context, query string, opts ...retriever.Option) ([]*schema.Document, error) {
	o := retriever.GetCommonOptions(&retriever.Options{TopK: &r.topK, ScoreThreshold: r.threshold}, opts...)
	own := retriever.GetImplSpecificOptions(&Options{Mode: r.mode}, opts...)
	if own.err != nil {
		return nil, own.err
	}
	if o.DSLInfo != nil {
		return nil, fmt.Errorf("%w: DSL info is not a mnemo option (use WithFilter)", ErrInvalid)
	}
	name := ""
	if o.SubIndex != nil {
		name = *o.SubIndex
	} else if o.Index != nil {
		name = *o.Index
	}
	e, err := vectorstore.AsEmbedder(o.Embedding)
	if err != nil {
		return nil, err
	}
	hits, err := r.docs.With(name, e).Search(ctx, vectorstore.Search{Text: query, K: *o.TopK, MinScore: o.ScoreThreshold, Filter: own.Filter, Mode: own.Mode})
	if err != nil {
		return nil, err
	}
	docs := make([]*schema.Document, len(hits))
	for i, h := range hits {
		docs[i] = (&schema.Document{ID: h.Record.ID, Content: h.Record.Content, MetaData: h.Record.Metadata}).
			WithScore(float64(h.Similarity))
	}
	return docs, nil
}

// GetType names the component in Eino's callbacks.
func (r *Retriever) GetType() string { return "Mnemo" }
