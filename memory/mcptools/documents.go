package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/analysis"
	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/internal/ctxsync"
	"github.com/mnemodb/mnemo/memory/internal/docpath"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
)

// KindDocuments is the kind of the documents collection
// (mnemo.CollectionConfig.Kind).
const KindDocuments = "mcptools.documents"

// documents keeps path-addressed text documents in one collection of a
// mnemo.Store, so they live on every backend: a record per document, its
// ID the logical path (package docstore's path rules, and at most
// mnemo.MaxIDLength bytes), its content the text, a one-value vector (the
// collection keeps no embedding: Dimension 1, a flat index) and the
// collection's full-text index for search. A folder is the set of
// documents whose paths start with it and a slash; it exists while one
// does, and a path cannot be a document and a folder at once.
//
// A documents is safe for concurrent use by multiple goroutines. Reads
// are single calls to the store. Writes are read-modify-write, so they
// are serialised: in this process by mu, and across processes (two
// servers on one PostgreSQL database) by a named lock in the store
// (mnemo.TryLock), taken for each write and waited for.
type documents struct {
	db       mnemo.Store
	c        *textvec.Bound
	maxSize  int
	lockName string
	mu       ctxsync.Mutex
}

// openDocuments opens the documents collection name in db, creating it
// if needed.
func openDocuments(ctx context.Context, db mnemo.Store, name string, maxSize int) (*documents, error) {
	cfg := mnemo.CollectionConfig{Dimension: 1, Metric: mnemo.L2, Index: mnemo.Flat}
	c, err := textvec.Bind(ctx, func(ctx context.Context) (mnemo.Collection, error) {
		return textvec.Open(ctx, db, name, KindDocuments, cfg)
	})
	if err != nil {
		return nil, err
	}
	return &documents{db: db, c: c, maxSize: maxSize, lockName: "mcptools.documents/" + name}, nil
}

// unit is the vector of every document: the collection embeds nothing.
var unit = []float32{1}

// clean validates a document path (see docpath.Clean) and returns it in
// canonical form.
func clean(p string) (string, error) {
	logical, _, err := docpath.Clean(p, docstore.ErrBadPath)
	if err != nil {
		return "", err
	}
	if len(logical) > mnemo.MaxIDLength {
		return "", fmt.Errorf("%w: %q: longer than %d bytes", docstore.ErrBadPath, p, mnemo.MaxIDLength)
	}
	return logical, nil
}

// cleanFolder validates a folder path: "/" (or "") is the root, and a
// trailing slash is allowed. It returns "" for the root.
func cleanFolder(p string) (string, error) {
	p = strings.TrimRight(p, "/")
	if strings.TrimSpace(p) == "" || p == "." {
		return "", nil
	}
	return clean(p)
}

// lock serialises a write with every other write to the collection, in
// this process and in others; it waits until ctx is done. The caller
// calls the returned func to unlock.
func (d *documents) lock(ctx context.Context) (func(), error) {
	if err := d.mu.Lock(ctx); err != nil {
		return nil, err
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		l, err := mnemo.TryLock(ctx, d.db, d.lockName)
		if err == nil {
			return func() { l.Unlock(); d.mu.Unlock() }, nil
		}
		if !errors.Is(err, mnemo.ErrLockHeld) {
			d.mu.Unlock()
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			d.mu.Unlock()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// get returns the document at logical, and whether there is one.
func (d *documents) get(ctx context.Context, logical string) (string, bool, error) {
	var r mnemo.Record
	var ok bool
	err := d.c.Do(ctx, func(c mnemo.Collection) error {
		var err error
		r, ok, err = c.Get(ctx, logical)
		return err
	})
	return r.Content, ok, err
}

// entry is a document a listing found: its path and size in bytes.
type entry struct {
	path string
	size int
}

// under calls fn with each document under folder ("" for the root) in
// path order, until fn returns false.
func (d *documents) under(ctx context.Context, folder string, fn func(entry) bool) error {
	prefix := folder + "/"
	err := d.c.Do(ctx, func(c mnemo.Collection) error {
		after := ""
		if folder != "" {
			after = prefix // every ID under it sorts after it
		}
		return textvec.ScanPages(ctx, c, after, func(page []mnemo.Record) error {
			for _, r := range page {
				if !strings.HasPrefix(r.ID, prefix) || !fn(entry{r.ID, len(r.Content)}) {
					return errDone
				}
			}
			return nil
		})
	})
	if errors.Is(err, errDone) {
		return nil
	}
	return err
}

// isFolder reports whether a document is under logical.
func (d *documents) isFolder(ctx context.Context, logical string) (bool, error) {
	found := false
	err := d.under(ctx, logical, func(entry) bool { found = true; return false })
	return found, err
}

func folderErr(logical string) error {
	return fmt.Errorf("%w: %s is a folder (documents are under it), not a document", docstore.ErrPathConflict, logical)
}

func notFound(logical string) error {
	return fmt.Errorf("%w: %s", docstore.ErrNotFound, logical)
}

// read returns the document at logical: docstore.ErrNotFound when there
// is none, docstore.ErrPathConflict when it is a folder.
func (d *documents) read(ctx context.Context, logical string) (string, error) {
	content, ok, err := d.get(ctx, logical)
	if err != nil || ok {
		return content, err
	}
	if folder, err := d.isFolder(ctx, logical); err != nil {
		return "", err
	} else if folder {
		return "", folderErr(logical)
	}
	return "", notFound(logical)
}

// checkWritable reports whether a document may be written at logical:
// no folder above it is a document, and it is no folder itself.
func (d *documents) checkWritable(ctx context.Context, logical string) error {
	for _, f := range docpath.Folders(logical) {
		_, ok, err := d.get(ctx, f)
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("%w: cannot write %s: %s is a document, not a folder", docstore.ErrPathConflict, logical, f)
		}
	}
	folder, err := d.isFolder(ctx, logical)
	if err != nil {
		return err
	}
	if folder {
		return folderErr(logical)
	}
	return nil
}

// checkContent refuses text that is not UTF-8 or is over the size limit;
// was, the size of the document an edit changes, lets a document already
// over the limit (written by another program) be edited as long as it
// grows no larger.
func (d *documents) checkContent(logical, content string, was int) error {
	if !utf8.ValidString(content) {
		return fmt.Errorf("%w: %s: the text is not valid UTF-8", docstore.ErrInvalid, logical)
	}
	if len(content) > d.maxSize && len(content) > was {
		return fmt.Errorf("%w: %s would be %d bytes, limit %d", docstore.ErrTooLarge, logical, len(content), d.maxSize)
	}
	return nil
}

func (d *documents) put(ctx context.Context, records ...mnemo.Record) error {
	return d.c.Do(ctx, func(c mnemo.Collection) error {
		_, err := c.Upsert(ctx, records...)
		return err
	})
}

func (d *documents) remove(ctx context.Context, ids ...string) (int, error) {
	var n int
	err := d.c.Do(ctx, func(c mnemo.Collection) error {
		var err error
		n, err = c.Delete(ctx, ids...)
		return err
	})
	return n, err
}

// create writes a new document, or replaces one when overwrite is set.
func (d *documents) create(ctx context.Context, p, text string, overwrite bool) (string, error) {
	logical, err := clean(p)
	if err != nil {
		return "", err
	}
	if err := d.checkContent(logical, text, 0); err != nil {
		return "", err
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	_, exists, err := d.get(ctx, logical)
	if err != nil {
		return "", err
	}
	if exists && !overwrite {
		return "", fmt.Errorf("%w: %s", ErrExists, logical)
	}
	if err := d.checkWritable(ctx, logical); err != nil {
		return "", err
	}
	if err := d.put(ctx, mnemo.Record{ID: logical, Vector: unit, Content: text}); err != nil {
		return "", err
	}
	return logical, nil
}

// edit reads the document at p, passes it to change and writes what
// change returns, holding the write lock throughout.
func (d *documents) edit(ctx context.Context, p string, change func(logical, content string) (string, error)) (string, error) {
	logical, err := clean(p)
	if err != nil {
		return "", err
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	content, err := d.read(ctx, logical)
	if err != nil {
		return "", err
	}
	updated, err := change(logical, content)
	if err != nil {
		return "", err
	}
	if err := d.checkContent(logical, updated, len(content)); err != nil {
		return "", err
	}
	return updated, d.put(ctx, mnemo.Record{ID: logical, Vector: unit, Content: updated})
}

// del deletes the document at p, or every document under the folder p;
// it returns the canonical path, whether it was a folder, and how many
// documents it deleted.
func (d *documents) del(ctx context.Context, p string) (string, bool, int, error) {
	target, err := cleanFolder(p)
	if err != nil {
		return "", false, 0, err
	}
	if target == "" {
		return "", false, 0, fmt.Errorf("%w: the root folder cannot be deleted; delete the folders in it one by one", docstore.ErrPathConflict)
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return "", false, 0, err
	}
	defer unlock()
	if _, ok, err := d.get(ctx, target); err != nil {
		return "", false, 0, err
	} else if ok {
		_, err := d.remove(ctx, target)
		return target, false, 1, err
	}
	var paths []string
	if err := d.under(ctx, target, func(e entry) bool { paths = append(paths, e.path); return true }); err != nil {
		return "", false, 0, err
	}
	if len(paths) == 0 {
		return "", false, 0, notFound(target)
	}
	if _, err := d.remove(ctx, paths...); err != nil {
		return "", false, 0, err
	}
	return target, true, len(paths), nil
}

// rename moves the document or folder at from to to, which must not
// exist; it returns the canonical paths and how many documents moved.
// The moved documents are written in one batch and the old ones then
// deleted in another: a failure between the two leaves both copies, never
// neither.
func (d *documents) rename(ctx context.Context, from, to string) (string, string, int, error) {
	src, err := cleanFolder(from)
	if err != nil {
		return "", "", 0, err
	}
	dst, err := clean(to)
	if err != nil {
		return "", "", 0, err
	}
	if src == "" {
		return "", "", 0, fmt.Errorf("%w: the root folder cannot be renamed", docstore.ErrPathConflict)
	}
	if dst == src {
		return "", "", 0, fmt.Errorf("%w: %s: the new path is the old one", ErrExists, dst)
	}
	if strings.HasPrefix(dst, src+"/") {
		return "", "", 0, fmt.Errorf("%w: cannot move %s into itself (%s)", docstore.ErrPathConflict, src, dst)
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return "", "", 0, err
	}
	defer unlock()
	if _, ok, err := d.get(ctx, dst); err != nil {
		return "", "", 0, err
	} else if ok {
		return "", "", 0, fmt.Errorf("%w: %s", ErrExists, dst)
	}
	if err := d.checkWritable(ctx, dst); errors.Is(err, docstore.ErrPathConflict) {
		if folder, _ := d.isFolder(ctx, dst); folder {
			return "", "", 0, fmt.Errorf("%w: %s (a folder)", ErrExists, dst)
		}
		return "", "", 0, err
	} else if err != nil {
		return "", "", 0, err
	}
	var moved []mnemo.Record
	var old []string
	if content, ok, err := d.get(ctx, src); err != nil {
		return "", "", 0, err
	} else if ok {
		moved, old = []mnemo.Record{{ID: dst, Vector: unit, Content: content}}, []string{src}
	} else {
		err := d.c.Do(ctx, func(c mnemo.Collection) error {
			moved, old = nil, nil
			return textvec.ScanPages(ctx, c, src+"/", func(page []mnemo.Record) error {
				for _, r := range page {
					if !strings.HasPrefix(r.ID, src+"/") {
						return errDone
					}
					id := dst + strings.TrimPrefix(r.ID, src)
					if len(id) > mnemo.MaxIDLength {
						return fmt.Errorf("%w: %s would move to %s, longer than %d bytes", docstore.ErrBadPath, r.ID, id, mnemo.MaxIDLength)
					}
					moved = append(moved, mnemo.Record{ID: id, Vector: unit, Content: r.Content, Metadata: r.Metadata})
					old = append(old, r.ID)
				}
				return nil
			})
		})
		if err != nil && !errors.Is(err, errDone) {
			return "", "", 0, err
		}
		if len(moved) == 0 {
			return "", "", 0, notFound(src)
		}
	}
	if err := d.put(ctx, moved...); err != nil {
		return "", "", 0, err
	}
	if _, err := d.remove(ctx, old...); err != nil {
		return "", "", 0, fmt.Errorf("moved %d documents to %s, but deleting them at %s failed (they are in both places now): %w", len(moved), dst, src, err)
	}
	return src, dst, len(moved), nil
}

// errDone stops a scan that has seen what it wanted.
var errDone = errors.New("done")

// found is a document a search found: its path, BM25 score and content.
type found struct {
	path    string
	score   float64
	content string
}

// search returns up to k documents best matching query by its words
// (BM25 over the collection's full-text index), best first.
func (d *documents) search(ctx context.Context, query string, k int) ([]found, error) {
	var hits []mnemo.Hit
	err := d.c.Do(ctx, func(c mnemo.Collection) error {
		var err error
		hits, err = c.Query(ctx, mnemo.Query{Text: query, Mode: mnemo.ModeText, K: k})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]found, len(hits))
	for i, h := range hits {
		out[i] = found{h.Record.ID, h.Score, h.Record.Content}
	}
	return out, nil
}

// matchingLines returns the numbers (from 1) of up to max lines of
// content that hold one of the query's terms, as the full-text index
// analyses them.
func matchingLines(content, query string, max int) []int {
	want := map[string]bool{}
	for _, t := range analysis.Terms(query) {
		want[t] = true
	}
	var out []int
	for i, line := range strings.Split(content, "\n") {
		for _, t := range analysis.Terms(line) {
			if want[t] {
				out = append(out, i+1)
				break
			}
		}
		if len(out) == max {
			break
		}
	}
	return out
}
