package mnemo

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// ScoreKey is the metadata key under which a retrieved document carries
// its score (a float64, the cosine similarity). A stored metadata field of
// that name is replaced in results, and dropped when a document is indexed.
const ScoreKey = "_score"

// DefaultK is the number of documents a retrieval returns when its options
// do not say.
const DefaultK = 3

// Config configures a DocStore; nil means the defaults.
type Config struct {
	// Collection holding the documents; default the retriever's name.
	Collection string
	// Embedder embeds documents and queries; default embed.NewHashing(0),
	// the offline embedder. A Genkit embedder goes through
	// NewForeignEmbedder.
	Embedder embed.Embedder
}

// DocStore is a mnemo collection of Genkit documents: Index adds to it, the
// retriever DefineRetriever registered searches it. It is safe for
// concurrent use by multiple goroutines.
type DocStore struct {
	db   *engine.DB
	name string
	emb  embed.Embedder
	c    *engine.Collection
}

// DefineRetriever creates (or opens) the collection of the retriever name
// in db, registers the retriever "mnemo/NAME" in g, and returns the
// DocStore that indexes into it with the retriever. The caller keeps
// ownership of db. opts may be nil; its ConfigSchema defaults to
// RetrieverOptions' schema (opts itself is not changed).
func DefineRetriever(g *genkit.Genkit, db *engine.DB, name string, cfg *Config, opts *ai.RetrieverOptions) (*DocStore, ai.Retriever, error) {
	if g == nil || db == nil || name == "" {
		return nil, nil, fmt.Errorf("%w: DefineRetriever needs a Genkit, a database and a name", ErrInvalid)
	}
	ds, err := newDocStore(db, name, cfg)
	if err != nil {
		return nil, nil, err
	}
	o := ai.RetrieverOptions{Label: "mnemo " + name}
	if opts != nil {
		o = *opts // the caller's options are not changed
	}
	if o.ConfigSchema == nil {
		o.ConfigSchema = core.InferSchemaMap(RetrieverOptions{})
	}
	return ds, genkit.DefineRetriever(g, api.NewName(Provider, name), &o, ds.Retrieve), nil
}

// Retriever returns the retriever DefineRetriever registered as name, or
// nil.
func Retriever(g *genkit.Genkit, name string) ai.Retriever {
	return genkit.LookupRetriever(g, api.NewName(Provider, name))
}

// IsDefinedRetriever reports whether DefineRetriever registered name in g.
func IsDefinedRetriever(g *genkit.Genkit, name string) bool {
	return Retriever(g, name) != nil
}

func newDocStore(db *engine.DB, name string, cfg *Config) (*DocStore, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if c.Collection == "" {
		c.Collection = name
	}
	e, err := defaultEmbedder(c.Embedder)
	if err != nil {
		return nil, err
	}
	id := e.Identity()
	col, err := db.CreateCollection(context.Background(), c.Collection,
		mnemo.CollectionConfig{Dimension: e.Dimension(), Metric: mnemo.Cosine, Embedder: id})
	if errors.Is(err, mnemo.ErrCollectionExists) {
		if old, gerr := db.Collection(c.Collection); gerr == nil && old.Config().Embedder != id {
			return nil, fmt.Errorf("%w: collection %q was built with %q, opened with %q", embed.ErrMismatch, c.Collection, old.Config().Embedder, id)
		}
	}
	if err != nil {
		return nil, err
	}
	return &DocStore{db: db, name: name, emb: e, c: col}, nil
}

// Collection returns the engine collection holding the documents.
func (ds *DocStore) Collection() *engine.Collection { return ds.c }

// Index embeds docs and stores them in ds, in one atomic, durable write.
// A document's ID is the MD5 of its JSON encoding, so indexing the same
// document again changes nothing.
func Index(ctx context.Context, docs []*ai.Document, ds *DocStore) error {
	if ds == nil {
		return fmt.Errorf("%w: nil DocStore", ErrInvalid)
	}
	_, err := ds.Index(ctx, docs)
	return err
}

// Index is the package's Index returning the documents' IDs, one per
// document (equal documents have equal IDs).
func (ds *DocStore) Index(ctx context.Context, docs []*ai.Document) ([]string, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	texts := make([]string, len(docs))
	recs := make([]mnemo.Record, len(docs))
	for i, d := range docs {
		t, err := text(d)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		meta := d.Metadata
		if _, ok := meta[ScoreKey]; ok { // a retrieved document indexed again
			meta = maps.Clone(meta)
			delete(meta, ScoreKey)
			d = &ai.Document{Content: d.Content, Metadata: meta}
		}
		id, err := docID(d)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		texts[i] = t
		recs[i] = mnemo.Record{ID: id, Content: t, Metadata: meta}
	}
	vs, err := embedTexts(ctx, ds.emb, "document", texts)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(recs))
	for i := range recs {
		recs[i].Vector = vs[i]
		ids[i] = recs[i].ID
	}
	if _, err := ds.c.Upsert(ctx, dedupe(recs)...); err != nil {
		return nil, err
	}
	return ids, nil
}

// dedupe drops repeated records (equal documents have equal IDs), which
// one engine batch refuses.
func dedupe(recs []mnemo.Record) []mnemo.Record {
	seen := make(map[string]bool, len(recs))
	out := recs[:0:0]
	for _, r := range recs {
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	return out
}

// Delete removes the documents with the given IDs and returns how many
// existed.
func (ds *DocStore) Delete(ctx context.Context, ids ...string) (int, error) {
	return ds.c.Delete(ctx, ids...)
}

// docID is the MD5 of the document's JSON, as Genkit's plugins compute it.
func docID(d *ai.Document) (string, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return fmt.Sprintf("%02x", md5.Sum(b)), nil
}

// RetrieverOptions are the options of a mnemo retriever, passed with
// ai.WithConfig (a *RetrieverOptions, a RetrieverOptions, or its JSON
// object as Genkit's developer UI sends it).
type RetrieverOptions struct {
	// K is the number of documents; 0 means DefaultK.
	K int `json:"k,omitempty"`
	// MinScore, when set, drops documents whose score is below it, in
	// [-1, 1]; a document exactly at it is kept.
	MinScore *float64 `json:"minScore,omitempty"`
	// Filter restricts the documents to those whose metadata it admits,
	// in Chroma's where-syntax: its JSON text, or a map[string]any (or
	// any Go value that encodes to such a JSON object).
	Filter any `json:"filter,omitempty"`
	// Mode is how the retriever retrieves: "hybrid" (the default when
	// empty: the query's words, by BM25 over the collection's full-text
	// index, fused with its embedding), "vector" or "text".
	Mode mnemo.Mode `json:"mode,omitempty"`
}

func retrieverOptions(v any) (RetrieverOptions, error) {
	var o RetrieverOptions
	switch v := v.(type) {
	case nil:
	case *RetrieverOptions:
		if v != nil {
			o = *v
		}
	case RetrieverOptions:
		o = v
	case map[string]any:
		b, err := json.Marshal(v)
		if err == nil {
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.DisallowUnknownFields()
			err = dec.Decode(&o)
		}
		if err != nil {
			return o, fmt.Errorf("%w: retriever options: %w", ErrInvalid, err)
		}
	default:
		return o, fmt.Errorf("%w: retriever options of type %T, want *mnemo.RetrieverOptions", ErrInvalid, v)
	}
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.K < 0 {
		return o, fmt.Errorf("%w: k %d, want at least 1", ErrInvalid, o.K)
	}
	if t := o.MinScore; t != nil && (math.IsNaN(*t) || *t < -1 || *t > 1) {
		return o, fmt.Errorf("%w: minimum score %v, want -1..1", ErrInvalid, *t)
	}
	return o, nil
}

// Retrieve is the retriever's function: it embeds the query document's
// text and returns the nearest documents, best first, each with its score
// under ScoreKey.
func (ds *DocStore) Retrieve(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	o, err := retrieverOptions(req.Options)
	if err != nil {
		return nil, err
	}
	f, err := filterOf(o.Filter)
	if err != nil {
		return nil, err
	}
	q, err := text(req.Query)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	vs, err := embedTexts(ctx, ds.emb, "query", []string{q})
	if err != nil {
		return nil, err
	}
	hits, err := ds.c.Query(ctx, buildQuery(search{text: q, vector: vs[0], k: o.K, filter: f, minScore: o.MinScore, mode: o.Mode}))
	if err != nil {
		return nil, err
	}
	resp := &ai.RetrieverResponse{Documents: make([]*ai.Document, len(hits))}
	for i, h := range hits {
		meta := h.Record.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		meta[ScoreKey] = float64(h.Similarity)
		resp.Documents[i] = ai.DocumentFromText(h.Record.Content, meta)
	}
	return resp, nil
}

// search is one retrieval request, before it becomes an engine query.
type search struct {
	text     string // the query text, as the caller wrote it
	vector   []float32
	k        int
	filter   *mnemo.Filter
	minScore *float64 // nil for none
	mode     mnemo.Mode
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
	if s.minScore != nil {
		t := float32(*s.minScore)
		q.MinSimilarity = &t
	}
	return q
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
	default:
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

// text joins a document's text parts; media and other parts are refused.
func text(d *ai.Document) (string, error) {
	if d == nil {
		return "", fmt.Errorf("%w: nil document", ErrInvalid)
	}
	var sb strings.Builder
	for _, p := range d.Content {
		if p == nil || !p.IsText() {
			return "", fmt.Errorf("%w: a document part that is not text (only text is embedded)", ErrInvalid)
		}
		sb.WriteString(p.Text)
	}
	return sb.String(), nil
}

// embedTexts checks texts and embeds them; what names them in errors.
func embedTexts(ctx context.Context, e embed.Embedder, what string, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			return nil, fmt.Errorf("%s %d: %w: no text", what, i, ErrEmpty)
		}
		if !utf8.ValidString(t) {
			return nil, fmt.Errorf("%s %d: %w: text is not valid UTF-8", what, i, ErrInvalid)
		}
	}
	vs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%w: %d vectors for %d texts", ErrEmbedding, len(vs), len(texts))
	}
	for i, v := range vs {
		if embed.IsZero(v) {
			return nil, fmt.Errorf("%s %d: %w: nothing to embed (the embedder maps it to the zero vector)", what, i, ErrEmpty)
		}
	}
	return vs, nil
}
