package mnemo

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore"
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

// documents returns the options of the vectorstore.Store behind the
// DocStore of the retriever name.
func (c *Config) documents(name string) *vectorstore.Options {
	o := vectorstore.Options{Collection: name}
	if c != nil {
		o.Embedder = c.Embedder
		if c.Collection != "" {
			o.Collection = c.Collection
		}
	}
	return &o
}

// DocStore is a mnemo collection of Genkit documents: Index adds to it, the
// retriever DefineRetriever registered searches it. It is safe for
// concurrent use by multiple goroutines.
type DocStore struct {
	docs *vectorstore.Store
}

// DefineRetriever creates (or opens) the collection of the retriever name
// in db, registers the retriever "mnemo/NAME" in g, and returns the
// DocStore that indexes into it with the retriever; ctx bounds creating
// the collection. db is any backend: an engine database the caller has
// open (engine.DB.Store) or a server (package postgres). The caller keeps
// ownership of db: DocStore.Close leaves it open. opts may be nil; its
// ConfigSchema defaults to RetrieverOptions' schema (opts itself is not
// changed). A name already defined in g is ErrInvalid (Genkit itself
// panics on a second registration).
func DefineRetriever(ctx context.Context, g *genkit.Genkit, db mnemo.Store, name string, cfg *Config, opts *ai.RetrieverOptions) (*DocStore, ai.Retriever, error) {
	if g == nil || db == nil || name == "" {
		return nil, nil, fmt.Errorf("%w: DefineRetriever needs a Genkit, a database and a name", ErrInvalid)
	}
	if IsDefinedRetriever(g, name) {
		return nil, nil, fmt.Errorf("%w: retriever %q is already defined in this Genkit", ErrInvalid, name)
	}
	docs, err := vectorstore.New(ctx, db, cfg.documents(name))
	if err != nil {
		return nil, nil, err
	}
	return define(ctx, g, &DocStore{docs: docs}, name, opts)
}

// OpenRetriever is DefineRetriever on an embedded database it opens (or
// creates) in dir; an empty dir means in memory only. DocStore.Close
// closes the database.
func OpenRetriever(dir string, g *genkit.Genkit, name string, cfg *Config, opts *ai.RetrieverOptions) (*DocStore, ai.Retriever, error) {
	if g == nil || name == "" {
		return nil, nil, fmt.Errorf("%w: OpenRetriever needs a Genkit and a name", ErrInvalid)
	}
	if IsDefinedRetriever(g, name) {
		return nil, nil, fmt.Errorf("%w: retriever %q is already defined in this Genkit", ErrInvalid, name)
	}
	docs, err := vectorstore.Open(dir, cfg.documents(name))
	if err != nil {
		return nil, nil, err
	}
	ds, r, err := define(context.Background(), g, &DocStore{docs: docs}, name, opts)
	if err != nil {
		docs.Close()
	}
	return ds, r, err
}

// define creates ds's collection and registers its retriever.
func define(ctx context.Context, g *genkit.Genkit, ds *DocStore, name string, opts *ai.RetrieverOptions) (*DocStore, ai.Retriever, error) {
	if _, err := ds.docs.Collection(ctx); err != nil {
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

// Close closes the database if OpenRetriever opened it; otherwise it does
// nothing. The retriever stays registered in its Genkit.
func (ds *DocStore) Close() error { return ds.docs.Close() }

// Collection returns the collection holding the documents (created again
// if it was dropped).
func (ds *DocStore) Collection(ctx context.Context) (mnemo.Collection, error) {
	return ds.docs.Collection(ctx)
}

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
	ids := make([]string, len(docs))
	vdocs := make([]vectorstore.Doc, len(docs))
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
		if ids[i], err = docID(d); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		vdocs[i] = vectorstore.Doc{ID: ids[i], Text: t, Metadata: meta}
	}
	if _, err := ds.docs.Add(ctx, dedupe(vdocs)); err != nil {
		return nil, err
	}
	return ids, nil
}

// dedupe drops repeated documents (equal documents have equal IDs), which
// one write refuses.
func dedupe(docs []vectorstore.Doc) []vectorstore.Doc {
	seen := make(map[string]bool, len(docs))
	out := docs[:0:0]
	for _, d := range docs {
		if !seen[d.ID] {
			seen[d.ID] = true
			out = append(out, d)
		}
	}
	return out
}

// Delete removes the documents with the given IDs and returns how many
// existed.
func (ds *DocStore) Delete(ctx context.Context, ids ...string) (int, error) {
	return ds.docs.Delete(ctx, ids...)
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
	// in Chroma's where-syntax: its JSON text, a map[string]any (or any
	// Go value that encodes to such a JSON object), or an *mnemo.Filter
	// (see vectorstore.FilterOf).
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
	return o, nil // k and the minimum score are checked by the search
}

// Retrieve is the retriever's function: it embeds the query document's
// text and returns the nearest documents, best first, each with its score
// under ScoreKey.
func (ds *DocStore) Retrieve(ctx context.Context, req *ai.RetrieverRequest) (*ai.RetrieverResponse, error) {
	o, err := retrieverOptions(req.Options)
	if err != nil {
		return nil, err
	}
	f, err := vectorstore.FilterOf(o.Filter)
	if err != nil {
		return nil, err
	}
	q, err := text(req.Query)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	hits, err := ds.docs.Search(ctx, vectorstore.Search{Text: q, K: o.K, MinScore: o.MinScore, Filter: f, Mode: o.Mode})
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
