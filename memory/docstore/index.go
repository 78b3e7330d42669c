package docstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/store"
)

// docIndex is the optional semantic index of a Store: an engine
// collection (in an in-memory database) of document embeddings, brought
// in line with the documents before every semantic search, so files
// edited or copied in by hand are searched as they are now. A record's ID
// is a hash of the document's path (paths may be longer than an ID), its
// content the document's text (which the collection's full-text index
// covers) and its metadata the path. Searches are hybrid: words and
// embedding fused; documents have no order, so no neighbour spreading.
type docIndex struct {
	db    *engine.DB
	c     mnemo.Collection
	space *textvec.Space

	// mu serialises sync-then-query, so concurrent searches each query
	// the index as they synced it.
	mu     sync.Mutex
	hashes map[string]string // path -> content hash of what is indexed
}

func newDocIndex(e embed.Embedder, obs textvec.Observe) (*docIndex, error) {
	space, err := textvec.New(e, store.ErrEmpty, ErrInvalid, obs)
	if err != nil {
		return nil, err
	}
	db, err := engine.Open("", &engine.Options{InMemory: true, Logger: obs.Logger, Metrics: obs.Metrics})
	if err != nil {
		return nil, err
	}
	c, err := space.Collection(context.Background(), db.Store(), "documents", "docstore.documents")
	if err != nil {
		db.Close()
		return nil, err
	}
	return &docIndex{db: db, c: c, space: space, hashes: map[string]string{}}, nil
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// docID is the record ID of the document at path p.
func docID(p string) string { return hashOf(p) }

// sync re-embeds changed documents and drops removed ones. Documents with
// nothing to embed (whitespace, punctuation) are left out. A document's
// hash is recorded only once the index holds what it hashes, so a write
// that fails is retried by the next sync. The caller holds x.mu.
func (x *docIndex) sync(ctx context.Context, docs map[string]string) error {
	var stale, texts []string
	for p, content := range docs {
		if x.hashes[p] != hashOf(content) {
			stale, texts = append(stale, p), append(texts, content)
		}
	}
	if len(stale) > 0 {
		vecs, err := x.space.Embed(ctx, "documents", texts)
		if err != nil {
			return err
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("%w: %s returned %d vectors for %d documents", embed.ErrResponse, x.space.Embedder().Identity(), len(vecs), len(texts))
		}
		var recs []mnemo.Record
		var indexed, blank []string
		for i, p := range stale {
			if embed.IsZero(vecs[i]) {
				blank = append(blank, p)
				continue
			}
			recs = append(recs, mnemo.Record{ID: docID(p), Vector: vecs[i], Content: docs[p], Metadata: map[string]any{"path": p}})
			indexed = append(indexed, p)
		}
		if _, err := x.c.Upsert(ctx, recs...); err != nil {
			return err
		}
		for _, p := range indexed {
			x.hashes[p] = hashOf(docs[p])
		}
		if err := x.remove(ctx, blank); err != nil {
			return err
		}
		for _, p := range blank {
			x.hashes[p] = hashOf(docs[p])
		}
	}
	var gone []string
	for p := range x.hashes {
		if _, ok := docs[p]; !ok {
			gone = append(gone, p)
		}
	}
	if err := x.remove(ctx, gone); err != nil {
		return err
	}
	for _, p := range gone {
		delete(x.hashes, p)
	}
	return nil
}

// remove deletes the documents at paths from the index.
func (x *docIndex) remove(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	ids := make([]string, len(paths))
	for i, p := range paths {
		ids[i] = docID(p)
	}
	_, err := x.c.Delete(ctx, ids...)
	return err
}

// SearchSemantic returns up to n documents nearest to query in meaning
// (n <= 0 means store.DefaultResults), nearest first. It needs a store
// opened with Options.Semantic (else ErrInvalid); the index is brought in
// line with the documents (including files changed by hand) before
// searching. An empty or whitespace-only query finds nothing, with no
// error; a query that is not UTF-8 is ErrInvalid, and one the embedder
// finds nothing to embed in is store.ErrEmpty.
func (d *Store) SearchSemantic(ctx context.Context, query string, n int) ([]Document, error) {
	if d.index == nil {
		return nil, fmt.Errorf("%w: semantic search is off (open with Options.Semantic)", ErrInvalid)
	}
	if n <= 0 {
		n = store.DefaultResults
	}
	if strings.TrimSpace(query) == "" {
		return nil, nil // nothing to match (see the package doc)
	}
	if _, err := d.index.space.Vector(ctx, "query", query); err != nil {
		return nil, err // before the scan: a bad query costs nothing
	}
	// The documents are read without the store's lock (see Store),
	// and the index is synced with what was read under its own lock, so
	// the embedding calls never hold up writes.
	docs, _, err := d.scan()
	if err != nil {
		return nil, err
	}
	return d.index.search(ctx, docs, query, n)
}

// search syncs the index with docs and returns the n documents best
// matching query.
func (x *docIndex) search(ctx context.Context, docs map[string]string, query string, n int) ([]Document, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.sync(ctx, docs); err != nil {
		return nil, err
	}
	hits, err := x.space.Search(ctx, x.c, textvec.Retrieval{Spread: new(float32(0))}, query, n, nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(hits))
	for _, h := range hits {
		p, _ := h.Record.Metadata["path"].(string)
		out = append(out, Document{Path: p, Content: docs[p]})
	}
	return out, nil
}
