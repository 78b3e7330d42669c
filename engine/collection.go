package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/mnemodb/mnemo/engine/internal/bm25"
	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/wal"
)

// Collection is a named set of records with one vector dimension and
// metric, an index over their vectors and a logical log. It implements
// mnemo.Sequencer. It is safe for concurrent use by
// multiple goroutines. A Collection stays valid until its
// database is closed or the collection dropped; then every method returns
// ErrClosed or ErrCollectionNotFound.
type Collection struct {
	db   *DB
	name atomic.Pointer[string] // changes only when ReplaceCollection renames it
	id   uint32
	cfg  mnemo.CollectionConfig
	log  *wal.Log

	// writes is held shared by every write from before it touches Pebble
	// until the index reflects it, and exclusively by a checkpoint, which
	// so sees no write in flight.
	writes sync.RWMutex
	// stripes order writes to the same record ID: a batch locks the
	// stripes of its IDs in ascending order.
	stripes [64]sync.Mutex

	idx index.Index // safe for concurrent use on its own

	// seq is the collection's sequence of positions (sequence.go).
	seq struct {
		mu      sync.Mutex // protects the following fields
		loaded  bool       // started and next hold what is stored
		started bool       // the sequence is set
		next    int64      // the next position Reserve returns
	}

	// mu protects the following fields. A key is in the maps before it
	// enters the index and leaves them after it left it.
	mu       sync.RWMutex
	ids      map[string]uint64
	keys     map[uint64]string
	meta     map[uint64]map[string]any
	content  map[uint64]string // contents of at most inlineContent bytes
	fields   *fieldIndex
	text     *bm25.Index // nil when the collection has no full-text index
	nextKey  uint64
	loadInfo loadInfo

	sinceCheckpoint atomic.Int64
	dropped         atomic.Bool
}

var stripeSeed = maphash.MakeSeed()

func (c *Collection) stripeOf(id string) int {
	return int(maphash.String(stripeSeed, id) % uint64(len(c.stripes)))
}

// lockIDs locks the stripes of ids in ascending order and returns the
// function that unlocks them.
func (c *Collection) lockIDs(ids []string) func() {
	var set [len(Collection{}.stripes)]bool
	for _, id := range ids {
		set[c.stripeOf(id)] = true
	}
	for i, on := range set {
		if on {
			c.stripes[i].Lock()
		}
	}
	return func() {
		for i, on := range set {
			if on {
				c.stripes[i].Unlock()
			}
		}
	}
}

// Name returns the collection's name.
func (c *Collection) Name() string { return *c.name.Load() }

// Config returns the collection's config, defaults applied.
func (c *Collection) Config() mnemo.CollectionConfig { return c.cfg }

// enter checks that the collection and its database are usable and
// registers an operation in flight (Close waits for it).
func (c *Collection) enter() (func(), error) {
	done, err := c.db.enter()
	if err != nil {
		return nil, err
	}
	if c.dropped.Load() {
		done()
		return nil, fmt.Errorf("%w: %q was dropped", mnemo.ErrCollectionNotFound, c.Name())
	}
	return done, nil
}

// Upsert inserts or replaces records, atomically: either every record is
// stored or, when it returns an error, none is. Records with an empty ID get
// a new UUID v4; the IDs are returned in order. When it returns nil the
// batch is on stable storage (unless the database was opened with NoSync).
// Concurrent writers share fsyncs (Pebble's group commit). The records'
// slices and maps are copied; the caller may reuse them.
func (c *Collection) Upsert(ctx context.Context, records ...mnemo.Record) ([]string, error) {
	t := telemetry.Start(c.db.rec)
	ids, size, err := c.upsert(ctx, records, nil)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpUpsert, Collection: c.Name(), Records: len(records), Bytes: size, Err: err})
	}
	return ids, err
}

// UpsertIf implements mnemo.Conditional: it stores those of records for
// which cond, given what their ID holds while the write holds the ID,
// returns true.
func (c *Collection) UpsertIf(ctx context.Context, cond func(exists bool, stored map[string]any) bool, records ...mnemo.Record) ([]string, error) {
	if err := mnemo.CheckUpsertIf(records); err != nil {
		return nil, err
	}
	if cond == nil {
		cond = func(bool, map[string]any) bool { return true }
	}
	t := telemetry.Start(c.db.rec)
	ids, size, err := c.upsert(ctx, records, cond)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpUpsert, Collection: c.Name(), Records: len(ids), Bytes: size, Err: err})
	}
	return ids, err
}

// upsert is Upsert; it also returns the size of the batch it committed.
// With cond, only the records it admits are written (UpsertIf).
func (c *Collection) upsert(ctx context.Context, records []mnemo.Record, cond func(bool, map[string]any) bool) ([]string, int64, error) {
	done, err := c.enter()
	if err != nil {
		return nil, 0, err
	}
	defer done()
	if len(records) == 0 {
		return nil, 0, nil
	}
	ids := make([]string, len(records))
	metas := make([][]byte, len(records))
	seen := make(map[string]bool, len(records))
	size := 0
	for i := range records {
		r := &records[i]
		ids[i] = r.ID
		if ids[i] == "" {
			ids[i] = uuid.NewString()
		}
		if metas[i], err = mnemo.CheckRecord(c.cfg, i, *r); err != nil {
			return nil, 0, err
		}
		rec := *r
		rec.ID = ids[i]
		if seen[ids[i]] {
			return nil, 0, fmt.Errorf("%w: id %q appears twice in one batch", mnemo.ErrInvalidRecord, ids[i])
		}
		seen[ids[i]] = true
		if size += mnemo.RecordBytes(rec, metas[i]); size > mnemo.MaxBatchBytes {
			return nil, 0, mnemo.BatchTooLarge(len(records), i)
		}
	}
	var docs []bm25.Doc
	if c.text != nil {
		docs = make([]bm25.Doc, len(records))
		for i, r := range records {
			meta := r.Metadata
			if len(c.cfg.Text.Fields) > 0 && meta != nil {
				// The stored form, as queries and reopen see it.
				meta, _ = decodeMetadata(metas[i])
			}
			docs[i] = textDocOf(c.cfg, r.Content, meta)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	c.writes.RLock()
	defer c.writes.RUnlock()
	if c.dropped.Load() { // dropped or replaced while this write waited
		return nil, 0, fmt.Errorf("%w: %q was dropped", mnemo.ErrCollectionNotFound, c.Name())
	}
	unlock := c.lockIDs(ids)
	defer unlock()
	if cond != nil {
		// The IDs are held: what they hold cannot change until the write.
		keep := make([]bool, len(ids))
		c.mu.RLock()
		for i, id := range ids {
			k, ok := c.ids[id]
			keep[i] = cond(ok, c.meta[k])
		}
		c.mu.RUnlock()
		// New slices: records is the caller's.
		var kr []mnemo.Record
		var ki []string
		var km [][]byte
		var kd []bm25.Doc
		for i := range ids {
			if keep[i] {
				kr, ki, km = append(kr, records[i]), append(ki, ids[i]), append(km, metas[i])
				if docs != nil {
					kd = append(kd, docs[i])
				}
			}
		}
		if len(ki) == 0 {
			return []string{}, 0, nil
		}
		records, ids, metas = kr, ki, km
		if docs != nil {
			docs = kd
		}
	}

	keys := make([]uint64, len(records))
	ops := make([]logOp, len(records))
	c.mu.Lock()
	for i, id := range ids {
		k, ok := c.ids[id]
		if !ok {
			k = c.nextKey
			c.nextKey++
		}
		keys[i] = k
		ops[i] = logOp{opUpsert, k, id}
	}
	c.mu.Unlock()

	b := c.db.pdb.NewBatch()
	defer b.Close()
	for i, r := range records {
		if err := b.Set(recordKey(c.id, ids[i]), encodeRecord(keys[i], r.Vector, r.Content, metas[i]), nil); err != nil {
			return nil, 0, fmt.Errorf("engine: upsert: %w", err)
		}
		if docs != nil {
			if err := b.Set(textKey(c.id, keys[i]), bm25.Encode(docs[i]), nil); err != nil {
				return nil, 0, fmt.Errorf("engine: upsert: %w", err)
			}
		}
	}
	if err := c.commit(ctx, b, ops); err != nil {
		return nil, 0, err
	}
	for i, r := range records {
		meta, _ := decodeMetadata(metas[i]) // our own encoding of checked metadata
		var doc *bm25.Doc
		if docs != nil {
			doc = &docs[i]
		}
		c.apply(ids[i], keys[i], r.Vector, r.Content, meta, doc)
	}
	c.afterWrite()
	return ids, int64(b.Len()), nil
}

// commit adds the log record to b and commits it.
func (c *Collection) commit(ctx context.Context, b *pebble.Batch, ops []logOp) error {
	seq, err := c.log.Append(b, logBatch, encodeOps(ops))
	if err != nil {
		return fmt.Errorf("engine: log: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.db.commit(b, c.db.writeOpts, c.Name(), "commit"); err != nil {
		return err
	}
	c.db.markAcked(c.id, seq)
	return nil
}

// apply makes the in-memory state reflect a stored record: the maps first,
// then the index (outside the lock, so queries run during the insert), so
// that every key a search returns is known to the maps.
func (c *Collection) apply(id string, key uint64, vec []float32, content string, meta map[string]any, doc *bm25.Doc) {
	c.mu.Lock()
	if old, ok := c.meta[key]; ok {
		c.fields.remove(key, id, old)
	}
	if doc != nil {
		c.text.Add(key, *doc)
	}
	c.ids[id], c.keys[key] = key, id
	c.meta[key] = meta
	c.cacheContent(key, content)
	c.fields.add(key, id, meta)
	c.mu.Unlock()
	if err := c.idx.Add(key, vec); err != nil {
		// The vector passed mnemo.CheckVector before it was stored.
		panic(fmt.Sprintf("engine: index rejected a validated vector: %v", err))
	}
}

// unapply removes a record from the in-memory state: the index first, then
// the maps.
func (c *Collection) unapply(id string, key uint64) {
	c.idx.Delete(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fields.remove(key, id, c.meta[key])
	if c.text != nil {
		c.text.Remove(key)
	}
	delete(c.ids, id)
	delete(c.keys, key)
	delete(c.meta, key)
	delete(c.content, key)
}

// inlineContent is the largest content kept in memory: queries then answer
// without reading the record from Pebble unless vectors are asked for.
// Agent memories are short texts; documents larger than this stay on disk.
const inlineContent = 1024

// cacheContent keeps or drops the in-memory copy of a record's content. The
// caller holds c.mu.
func (c *Collection) cacheContent(key uint64, content string) {
	if len(content) <= inlineContent {
		c.content[key] = content
	} else {
		delete(c.content, key)
	}
}

// afterWrite counts a logged write and asks for a checkpoint when due.
func (c *Collection) afterWrite() {
	n := c.sinceCheckpoint.Add(1)
	if every := c.db.opts.CheckpointEvery; every > 0 && n >= int64(every) {
		c.db.requestCheckpoint(c)
	}
}

// Delete removes the records with the given IDs, atomically, and returns
// how many existed. Absent IDs are not an error. Durability is as for
// Upsert.
func (c *Collection) Delete(ctx context.Context, ids ...string) (int, error) {
	t := telemetry.Start(c.db.rec)
	n, err := c.delete(ctx, ids, nil)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpDelete, Collection: c.Name(), Records: n, Err: err})
	}
	return n, err
}

// DeleteIf implements mnemo.Conditional: it deletes those of ids whose
// stored metadata cond admits while the write holds them.
func (c *Collection) DeleteIf(ctx context.Context, cond func(stored map[string]any) bool, ids ...string) (int, error) {
	if cond == nil {
		cond = func(map[string]any) bool { return true }
	}
	t := telemetry.Start(c.db.rec)
	n, err := c.delete(ctx, ids, cond)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpDelete, Collection: c.Name(), Records: n, Err: err})
	}
	return n, err
}

func (c *Collection) delete(ctx context.Context, ids []string, cond func(map[string]any) bool) (int, error) {
	done, err := c.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	for _, id := range ids {
		if err := mnemo.CheckID(id); err != nil {
			return 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	c.writes.RLock()
	defer c.writes.RUnlock()
	if c.dropped.Load() { // dropped or replaced while this write waited
		return 0, fmt.Errorf("%w: %q was dropped", mnemo.ErrCollectionNotFound, c.Name())
	}
	unlock := c.lockIDs(ids)
	defer unlock()
	var ops []logOp
	c.mu.RLock()
	for _, id := range ids {
		if k, ok := c.ids[id]; ok && !slices.ContainsFunc(ops, func(o logOp) bool { return o.id == id }) && (cond == nil || cond(c.meta[k])) {
			ops = append(ops, logOp{opDelete, k, id})
		}
	}
	c.mu.RUnlock()
	if len(ops) == 0 {
		return 0, nil
	}
	b := c.db.pdb.NewBatch()
	defer b.Close()
	for _, o := range ops {
		if err := b.Delete(recordKey(c.id, o.id), nil); err != nil {
			return 0, fmt.Errorf("engine: delete: %w", err)
		}
		if c.text != nil {
			if err := b.Delete(textKey(c.id, o.key), nil); err != nil {
				return 0, fmt.Errorf("engine: delete: %w", err)
			}
		}
	}
	if err := c.commit(ctx, b, ops); err != nil {
		return 0, err
	}
	for _, o := range ops {
		c.unapply(o.id, o.key)
	}
	c.afterWrite()
	return len(ops), nil
}

// Get returns the record with the given ID and whether it exists. The
// returned record is the caller's to keep.
func (c *Collection) Get(ctx context.Context, id string) (rec mnemo.Record, found bool, err error) {
	done, err := c.enter()
	if err != nil {
		return mnemo.Record{}, false, err
	}
	defer done()
	if err := mnemo.CheckID(id); err != nil {
		return mnemo.Record{}, false, err
	}
	if err := ctx.Err(); err != nil {
		return mnemo.Record{}, false, err
	}
	err = guard(func() error {
		rec, found, err = c.read(id)
		return err
	})
	return rec, found, err
}

// read fetches and decodes a stored record.
func (c *Collection) read(id string) (mnemo.Record, bool, error) {
	return c.readWith(id, nil, false)
}

// readWith fetches a stored record; when haveMeta is set, meta is used as
// the record's metadata instead of decoding the stored JSON (queries pass a
// copy of the in-memory metadata, which is the same data).
func (c *Collection) readWith(id string, meta map[string]any, haveMeta bool) (mnemo.Record, bool, error) {
	v, closer, err := c.db.pdb.Get(recordKey(c.id, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return mnemo.Record{}, false, nil
	}
	if err != nil {
		return mnemo.Record{}, false, readError(fmt.Sprintf("get %q", id), err)
	}
	defer closer.Close()
	sr, err := decodeRecord(v)
	if err != nil {
		return mnemo.Record{}, false, fmt.Errorf("%w: record %q of %q: %v", ErrCorrupt, id, c.Name(), err)
	}
	if !haveMeta {
		if meta, err = decodeMetadata(sr.meta); err != nil {
			return mnemo.Record{}, false, fmt.Errorf("%w: record %q of %q: metadata: %v", ErrCorrupt, id, c.Name(), err)
		}
	}
	return mnemo.Record{ID: id, Vector: sr.vector, Content: sr.content, Metadata: meta}, true, nil
}

// Count returns the number of records.
func (c *Collection) Count() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.ids)
}

// Scan returns up to limit records in ascending ID order, starting after
// the ID after ("" starts at the beginning), and the ID to pass as after to
// continue ("" when there is nothing more). It reads a consistent snapshot.
func (c *Collection) Scan(ctx context.Context, after string, limit int) (page []mnemo.Record, next string, err error) {
	done, err := c.enter()
	if err != nil {
		return nil, "", err
	}
	defer done()
	if limit <= 0 {
		return nil, "", fmt.Errorf("%w: limit %d, want > 0", mnemo.ErrBadQuery, limit)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	err = guard(func() error {
		page, next, err = c.scan(after, limit)
		return err
	})
	return page, next, err
}

func (c *Collection) scan(after string, limit int) ([]mnemo.Record, string, error) {
	prefix := cidPrefix(tagRecord, c.id)
	lower := prefix
	if after != "" {
		lower = append(recordKey(c.id, after), 0)
	}
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, "", readError("scan", err)
	}
	defer it.Close()
	var out []mnemo.Record
	for ok := it.First(); ok; ok = it.Next() {
		id := string(it.Key()[len(prefix):])
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, "", readError("scan", err)
		}
		sr, err := decodeRecord(v)
		if err != nil {
			return nil, "", fmt.Errorf("%w: record %q of %q: %v", ErrCorrupt, id, c.Name(), err)
		}
		meta, err := decodeMetadata(sr.meta)
		if err != nil {
			return nil, "", fmt.Errorf("%w: record %q of %q: metadata: %v", ErrCorrupt, id, c.Name(), err)
		}
		out = append(out, mnemo.Record{ID: id, Vector: sr.vector, Content: sr.content, Metadata: meta})
	}
	if err := it.Error(); err != nil {
		return nil, "", readError("scan", err)
	}
	return out, "", nil
}

// Validate reports whether Upsert would accept r, without writing anything
// (an empty ID is valid: Upsert assigns one).
func (c *Collection) Validate(r mnemo.Record) error {
	_, err := mnemo.CheckRecord(c.cfg, 0, r)
	return err
}
