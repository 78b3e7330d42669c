package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// docIndex is the optional semantic index of a Documents store: an engine
// collection (in an in-memory database) of document embeddings keyed by
// path, brought in line with the documents before every semantic search,
// so files edited or copied in by hand are searched as they are now.
type docIndex struct {
	db  *engine.DB
	c   *engine.Collection
	emb embed.Embedder

	// mu serialises sync-then-query, so concurrent searches each query
	// the index as they synced it.
	mu     sync.Mutex
	hashes map[string]string // path -> content hash of what is indexed
}

func newDocIndex(e embed.Embedder) (*docIndex, error) {
	if e == nil {
		h, err := embed.NewHashing(0)
		if err != nil {
			return nil, err
		}
		e = h
	}
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		return nil, err
	}
	c, err := db.CreateCollection(context.Background(), "documents", engine.CollectionConfig{Dimension: e.Dimension(), Embedder: e.Identity()})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &docIndex{db: db, c: c, emb: e, hashes: map[string]string{}}, nil
}

// sync re-embeds changed documents and drops removed ones. Documents with
// nothing to embed (whitespace, punctuation) are left out. The caller
// holds x.mu.
func (x *docIndex) sync(ctx context.Context, docs map[string]string) error {
	var stale []string
	var texts []string
	for p, content := range docs {
		sum := sha256.Sum256([]byte(content))
		h := hex.EncodeToString(sum[:])
		if x.hashes[p] != h {
			stale, texts = append(stale, p), append(texts, content)
		}
	}
	if len(stale) > 0 {
		vecs, err := x.emb.Embed(ctx, texts)
		if err != nil {
			return err
		}
		var recs []engine.Record
		for i, p := range stale {
			sum := sha256.Sum256([]byte(texts[i]))
			x.hashes[p] = hex.EncodeToString(sum[:])
			if embed.IsZero(vecs[i]) {
				x.c.Delete(ctx, p)
				continue
			}
			recs = append(recs, engine.Record{ID: p, Vector: vecs[i]})
		}
		if len(recs) > 0 {
			if _, err := x.c.Upsert(ctx, recs...); err != nil {
				return err
			}
		}
	}
	var gone []string
	for p := range x.hashes {
		if _, ok := docs[p]; !ok {
			gone = append(gone, p)
			delete(x.hashes, p)
		}
	}
	if len(gone) > 0 {
		if _, err := x.c.Delete(ctx, gone...); err != nil {
			return err
		}
	}
	return nil
}

// SearchSemantic returns up to n documents nearest to query in meaning
// (n <= 0 means DefaultResults), nearest first. It needs a store opened
// with DocumentsOptions.Semantic; the index is brought in line with the
// documents (including files changed by hand) before searching.
func (d *Documents) SearchSemantic(ctx context.Context, query string, n int) ([]Document, error) {
	if d.index == nil {
		return nil, fmt.Errorf("%w: semantic search is off (open with DocumentsOptions.Semantic)", ErrInvalid)
	}
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: query is empty", ErrEmpty)
	}
	if n <= 0 {
		n = DefaultResults
	}
	// The documents are read without the store's lock (see Documents),
	// and the index is synced with what was read under its own lock, so
	// the embedding calls never hold up writes.
	docs, _, err := d.scan()
	if err != nil {
		return nil, err
	}
	return d.index.search(ctx, docs, query, n)
}

// search syncs the index with docs and returns the n documents nearest to
// query.
func (x *docIndex) search(ctx context.Context, docs map[string]string, query string, n int) ([]Document, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.sync(ctx, docs); err != nil {
		return nil, err
	}
	qv, err := x.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if embed.IsZero(qv[0]) {
		return nil, fmt.Errorf("%w: query has no letters or digits", ErrEmpty)
	}
	hits, err := x.c.Query(ctx, engine.Query{Vector: qv[0], K: n})
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(hits))
	for _, h := range hits {
		out = append(out, Document{Path: h.Record.ID, Content: docs[h.Record.ID]})
	}
	return out, nil
}
