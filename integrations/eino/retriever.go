package mnemo

import (
	"context"
	"fmt"
	"math"

	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
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
// database. It is safe for concurrent use by multiple goroutines.
type Retriever struct {
	db         *engine.DB
	collection string
	emb        embed.Embedder
	topK       int
	threshold  *float64
	mode       mnemo.Mode
}

var _ retriever.Retriever = (*Retriever)(nil)

// NewRetriever returns a retriever over db; the caller keeps ownership of
// db.
func NewRetriever(_ context.Context, db *engine.DB, cfg *RetrieverConfig) (*Retriever, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	var c RetrieverConfig
	if cfg != nil {
		c = *cfg
	}
	if c.Collection == "" {
		c.Collection = DefaultCollection
	}
	if c.TopK == 0 {
		c.TopK = DefaultTopK
	}
	if err := checkSearch(c.TopK, c.ScoreThreshold); err != nil {
		return nil, err
	}
	e, err := defaultEmbedder(c.Embedder)
	if err != nil {
		return nil, err
	}
	return &Retriever{db: db, collection: c.Collection, emb: e, topK: c.TopK, threshold: c.ScoreThreshold, mode: c.Mode}, nil
}

func checkSearch(topK int, threshold *float64) error {
	if topK < 1 {
		return fmt.Errorf("%w: top k %d, want at least 1", ErrInvalid, topK)
	}
	if t := threshold; t != nil && (math.IsNaN(*t) || *t < -1 || *t > 1) {
		return fmt.Errorf("%w: score threshold %v, want -1..1", ErrInvalid, *t)
	}
	return nil
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
// (`{"year": {"$gte": 2020}}`), a map[string]any of the same shape, or an
// *mnemo.Filter; a malformed one makes Retrieve fail with ErrInvalid.
func WithFilter(filter any) retriever.Option {
	return retriever.WrapImplSpecificOptFn(func(o *Options) {
		o.Filter, o.err = filterOf(filter)
	})
}

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
	case map[string]any:
		f, err = mnemo.NewFilter(v)
	default:
		err = fmt.Errorf("a filter of type %T, want a string, map[string]any or *mnemo.Filter", v)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: filter: %w", ErrInvalid, err)
	}
	return f, nil
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
	if err := checkSearch(*o.TopK, o.ScoreThreshold); err != nil {
		return nil, err
	}
	name := r.collection
	if o.SubIndex != nil {
		name = *o.SubIndex
	} else if o.Index != nil {
		name = *o.Index
	}
	e := r.emb
	if o.Embedding != nil {
		var err error
		if e, err = asMnemo(o.Embedding); err != nil {
			return nil, err
		}
	}
	vs, err := embedTexts(ctx, e, "query", []string{query})
	if err != nil {
		return nil, err
	}
	c, err := collection(ctx, r.db, name, e, false)
	if err != nil || c == nil {
		return nil, err
	}
	hits, err := c.Query(ctx, buildQuery(search{text: query, vector: vs[0], k: *o.TopK, filter: own.Filter, threshold: o.ScoreThreshold, mode: own.Mode}))
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

// search is one retrieval request, before it becomes an engine query.
type search struct {
	text      string // the query text, as the caller wrote it
	vector    []float32
	k         int
	filter    *mnemo.Filter
	threshold *float64 // minimum score, nil for none
	mode      mnemo.Mode
}

// buildQuery is the one place that decides how the retriever retrieves: the
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
	if s.threshold != nil {
		t := float32(*s.threshold)
		q.MinSimilarity = &t
	}
	return q
}

// GetType names the component in Eino's callbacks.
func (r *Retriever) GetType() string { return "Mnemo" }
