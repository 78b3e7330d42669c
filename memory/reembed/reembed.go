// Package reembed moves a memory to a new embedder: it embeds every
// record of a collection again, into a staging collection, while the old
// collection goes on serving reads and writes, and then puts the staging
// collection in the old one's place atomically.
//
// Embedders cannot be mixed in one collection (their vectors live in
// different spaces, and every adapter refuses a collection made by another
// embedder with embed.ErrMismatch), so changing the embedding model means
// embedding everything again. Collection does it in passes:
//
//  1. the staging collection, name + StagingSuffix, is created with the new
//     embedder's identity and dimension and the old collection's kind,
//     metric, index and full-text settings;
//  2. a pass walks both collections in ID order and embeds every record of
//     the old collection that the staging one lacks or holds with another
//     content or metadata, and deletes from the staging collection what
//     the old one no longer has; passes repeat while writers keep changing
//     the old collection, at most MaxPasses times;
//  3. the switch (mnemo.ReplaceCollection) makes writes to the old
//     collection wait, runs one last pass, and puts the staging collection
//     under the old name in one commit.
//
// Nothing is lost or duplicated: the records keep their IDs, content and
// metadata, and the last pass runs with no write in flight. A run that
// stops (an error, a cancelled context, a crash, kill -9) leaves the old
// collection serving and the staging collection as far as it got; the
// next run resumes from it, embedding only what is missing or changed.
// After the switch, handles that still use the old embedder fail with
// embed.ErrMismatch: open them again with the new one.
//
// The switch needs a store that can replace a collection atomically
// (mnemo.Replacer: the embedded engine and PostgreSQL both can); on
// another store Collection fails with mnemo.ErrNoReplace before embedding
// anything.
package reembed

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

// StagingSuffix names the staging collection: the collection's name and
// this suffix.
const StagingSuffix = ".reembed"

// Defaults of Options.
const (
	DefaultBatch = 64
	MaxPasses    = 5
)

// ErrZeroVector reports a record whose text the new embedder maps to the
// zero vector, which cannot be searched by cosine; delete or change it and
// run again.
var ErrZeroVector = errors.New("reembed: the new embedder gives a zero vector")

// Options tune Collection; nil means the defaults.
type Options struct {
	// Batch is how many texts one Embed call gets; 0 means DefaultBatch.
	Batch int
	// Progress, when set, is called after each batch and at the end of
	// each pass.
	Progress func(Progress)
	// Text returns the text a record is embedded from; nil means its
	// Content (what every memory adapter embeds).
	Text func(mnemo.Record) string
}

// Progress reports how far a re-embedding got.
type Progress struct {
	Pass     int  // from 1; the last pass runs during the switch
	Final    bool // the pass is the one during the switch
	Scanned  int  // records of the old collection the pass has walked
	Total    int  // records of the old collection when the pass began
	Embedded int  // records the pass has embedded and written
	Deleted  int  // staging records the pass has deleted
}

// Result is what Collection did.
type Result struct {
	Records  int  // records of the collection after the switch
	Embedded int  // records embedded in this run, every pass together
	Passes   int  // passes run, the one during the switch included
	Done     bool // the collection was already made by the embedder: nothing to do
}

// Collection re-embeds the collection name of db with e (see the package
// doc). It returns when the switch is done, or with an error that left
// the old collection serving; run it again to resume.
func Collection(ctx context.Context, db mnemo.Store, name string, e embed.Embedder, o *Options) (Result, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Batch <= 0 {
		opts.Batch = DefaultBatch
	}
	if opts.Text == nil {
		opts.Text = func(r mnemo.Record) string { return r.Content }
	}
	if e == nil || e.Dimension() <= 0 || e.Identity() == "" {
		return Result{}, fmt.Errorf("%w: an embedder with a dimension and an identity is required", mnemo.ErrInvalidConfig)
	}
	src, err := db.Collection(ctx, name)
	if err != nil {
		return Result{}, err
	}
	staging := name + StagingSuffix
	if src.Config().Embedder == e.Identity() {
		// Done before (the switch removes the staging collection), or
		// nothing to do.
		n, err := src.Count(ctx)
		return Result{Records: n, Done: true}, err
	}
	if _, ok := mnemo.ReplacerOf(db); !ok { // before anything is embedded
		return Result{}, fmt.Errorf("%w: %T", mnemo.ErrNoReplace, db)
	}
	dst, err := stagingCollection(ctx, db, staging, src.Config(), e)
	if err != nil {
		return Result{}, err
	}
	r := &run{e: e, o: opts}
	for r.passes < MaxPasses-1 {
		changed, err := r.pass(ctx, src, dst, false)
		if err != nil {
			return r.result(), err
		}
		if changed == 0 {
			break
		}
	}
	err = mnemo.ReplaceCollection(ctx, db, name, staging, func(ctx context.Context, old, new mnemo.Collection) error {
		_, err := r.pass(ctx, old, new, true)
		return err
	})
	if err != nil {
		return r.result(), err
	}
	res := r.result()
	res.Records, err = dst.Count(ctx)
	return res, err
}

// ErrNotStaging reports a collection under the staging name that no
// re-embedding of the collection made: it is left alone.
var ErrNotStaging = errors.New("reembed: the staging name holds another collection")

// stagingCollection opens the staging collection for e, creating it
// with src's settings. One left by a run towards another embedder is
// dropped and made again; a collection of that name that cannot be a
// staging collection of src (another kind, or made by src's own
// embedder or by none) is refused with ErrNotStaging, never dropped.
func stagingCollection(ctx context.Context, db mnemo.Store, name string, src mnemo.CollectionConfig, e embed.Embedder) (mnemo.Collection, error) {
	cfg := src
	cfg.Dimension, cfg.Embedder = e.Dimension(), e.Identity()
	if old, err := db.Collection(ctx, name); err == nil && !old.Config().Equal(cfg.WithDefaults()) {
		oc := old.Config()
		if oc.Kind != src.Kind || oc.Embedder == "" || oc.Embedder == src.Embedder || oc.Metric != src.Metric {
			return nil, fmt.Errorf("%w: %q (kind %q, embedder %q); rename or drop it to re-embed", ErrNotStaging, name, oc.Kind, oc.Embedder)
		}
		if err := db.DropCollection(ctx, name); err != nil && !errors.Is(err, mnemo.ErrCollectionNotFound) {
			return nil, err
		}
	}
	return db.CreateCollection(ctx, name, cfg)
}

// run is one Collection call's state.
type run struct {
	e        embed.Embedder
	o        Options
	passes   int
	embedded int
}

func (r *run) result() Result { return Result{Embedded: r.embedded, Passes: r.passes} }

// pass brings dst up to date with src and returns how many records it
// embedded or deleted.
func (r *run) pass(ctx context.Context, src, dst mnemo.Collection, final bool) (int, error) {
	r.passes++
	total, err := src.Count(ctx)
	if err != nil {
		return 0, err
	}
	p := Progress{Pass: r.passes, Final: final, Total: total}
	it := &cursor{c: dst}
	var todo []mnemo.Record
	var gone []string
	flush := func() error {
		if len(gone) > 0 {
			if _, err := dst.Delete(ctx, gone...); err != nil {
				return err
			}
			p.Deleted += len(gone)
			gone = gone[:0]
		}
		if len(todo) > 0 {
			if err := r.embed(ctx, dst, todo); err != nil {
				return err
			}
			p.Embedded += len(todo)
			r.embedded += len(todo)
			todo = todo[:0]
		}
		if r.o.Progress != nil {
			r.o.Progress(p)
		}
		return nil
	}
	after := ""
	for {
		page, next, err := src.Scan(ctx, after, 1000)
		if err != nil {
			return 0, err
		}
		for _, rec := range page {
			have, err := it.upTo(ctx, rec.ID, &gone)
			if err != nil {
				return 0, err
			}
			if have == nil || have.Content != rec.Content || !sameMeta(have.Metadata, rec.Metadata) {
				todo = append(todo, rec)
			}
			p.Scanned++
			if len(todo) >= r.o.Batch || len(gone) >= r.o.Batch {
				if err := flush(); err != nil {
					return 0, err
				}
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	if err := it.rest(ctx, &gone); err != nil {
		return 0, err
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return p.Embedded + p.Deleted, nil
}

// embed embeds recs with the new embedder and writes them to dst with
// their IDs, content and metadata.
func (r *run) embed(ctx context.Context, dst mnemo.Collection, recs []mnemo.Record) error {
	texts := make([]string, len(recs))
	for i, rec := range recs {
		texts[i] = r.o.Text(rec)
	}
	vecs, err := r.e.Embed(ctx, texts)
	if err != nil {
		return err
	}
	if len(vecs) != len(recs) {
		return fmt.Errorf("%w: %s returned %d vectors for %d texts", embed.ErrResponse, r.e.Identity(), len(vecs), len(recs))
	}
	out := make([]mnemo.Record, len(recs))
	for i, rec := range recs {
		if len(vecs[i]) != r.e.Dimension() {
			return fmt.Errorf("%w: %s returned a vector of %d values, want %d", embed.ErrResponse, r.e.Identity(), len(vecs[i]), r.e.Dimension())
		}
		if embed.IsZero(vecs[i]) {
			return fmt.Errorf("%w: record %q (%.40q)", ErrZeroVector, rec.ID, texts[i])
		}
		out[i] = mnemo.Record{ID: rec.ID, Vector: vecs[i], Content: rec.Content, Metadata: rec.Metadata}
	}
	_, err = dst.Upsert(ctx, out...)
	return err
}

// sameMeta compares two records' metadata as the store returns them (the
// same store normalises both the same way); nil and empty are equal.
func sameMeta(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// cursor walks the staging collection in ID order beside the old one.
type cursor struct {
	c     mnemo.Collection
	page  []mnemo.Record
	after string
	done  bool
}

// upTo returns the staging record with ID id (nil when none), adding the
// IDs before it, which the old collection lacks, to gone.
func (it *cursor) upTo(ctx context.Context, id string, gone *[]string) (*mnemo.Record, error) {
	for {
		if len(it.page) == 0 {
			if it.done {
				return nil, nil
			}
			page, next, err := it.c.Scan(ctx, it.after, 1000)
			if err != nil {
				return nil, err
			}
			it.page, it.after, it.done = page, next, next == ""
			if len(page) == 0 {
				it.done = true
				return nil, nil
			}
		}
		head := &it.page[0]
		switch {
		case head.ID < id:
			*gone = append(*gone, head.ID)
			it.page = it.page[1:]
		case head.ID == id:
			it.page = it.page[1:]
			return head, nil
		default:
			return nil, nil
		}
	}
}

// rest adds every staging record left to gone.
func (it *cursor) rest(ctx context.Context, gone *[]string) error {
	for {
		for _, r := range it.page {
			*gone = append(*gone, r.ID)
		}
		it.page = nil
		if it.done {
			return nil
		}
		page, next, err := it.c.Scan(ctx, it.after, 1000)
		if err != nil {
			return err
		}
		it.page, it.after, it.done = page, next, next == "" || len(page) == 0
	}
}
