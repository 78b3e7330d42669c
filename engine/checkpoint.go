package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/wal"
)

// A checkpoint is a snapshot of a collection's index in a file of its own,
// and a descriptor in Pebble naming the file and the log sequence number it
// covers. It is written in steps, each crash-safe:
//
//  1. compact the index, beside queries and writes (index.HNSW.Compact
//     repairs the graph under its shared lock, a slice at a time); then,
//     under the collection's write lock (no write in flight), note the
//     last log sequence number and serialise the index to memory
//     (WriteTo, which holds the index exclusively, so queries wait for it
//     too); records deleted since the compaction began are written as
//     tombstones, which the next checkpoint releases;
//  2. write it to <name>.tmp, fsync, rename to <name>, fsync the directory;
//  3. store the descriptor (synced): from now on Open uses the new file;
//  4. truncate the log up to the sequence number;
//  5. remove the previous checkpoint file.
//
// A crash before 3 leaves the old descriptor, its file and the whole log: Open
// loads the old checkpoint and replays more. A crash after 3 leaves log
// records or a file that Open no longer needs; it deletes them. A file that
// fails to load (missing, truncated, corrupt) makes Open rebuild the index
// from the records, and Stats says so.

type checkpointDesc struct {
	File string    `json:"file"`
	Seq  uint64    `json:"seq"`
	Size int64     `json:"size"`
	Time time.Time `json:"time"`
}

const checkpointDir = "checkpoints"

// checkpointHook, when set by a test, runs after each step of a checkpoint;
// an error stops the checkpoint there, as a crash would.
var checkpointHook func(step int) error

func hook(step int) error {
	if checkpointHook == nil {
		return nil
	}
	return checkpointHook(step)
}

// Checkpoint writes a checkpoint of the collection's index now and
// truncates its log. Queries and writes go on while the index is compacted
// (the index holds them off only for a pass over its nodes' flags; see
// index.HNSW.Compact), and both wait while it is serialised to memory,
// not while the file is written (figures in docs/performance-notes.md).
func (c *Collection) Checkpoint(ctx context.Context) error {
	done, err := c.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.checkpoint()
}

// checkpoint writes a checkpoint (see Checkpoint) and records it.
func (c *Collection) checkpoint() error {
	t := telemetry.Start(c.db.rec)
	var vectors int
	var size int64
	err := c.writeCheckpoint(&vectors, &size)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpCheckpoint, Collection: c.Name(), Records: vectors, Bytes: size, Err: err})
	}
	return err
}

// writeCheckpoint writes a checkpoint and sets *vectors and *size to the
// number of vectors and the bytes it holds.
func (c *Collection) writeCheckpoint(vectors *int, size *int64) error {
	if c.db.readOnly != nil {
		return c.db.readOnly
	}
	c.db.cpMu.Lock()
	defer c.db.cpMu.Unlock()
	if x, ok := c.idx.(index.Compacter); ok {
		x.Compact()
	}
	var buf bytes.Buffer
	buf.Grow(snapshotSize(c.idx))
	c.writes.Lock()
	seq := c.log.LastSeq()
	_, err := c.idx.WriteTo(&buf)
	*vectors, *size = c.idx.Len(), int64(buf.Len())
	c.sinceCheckpoint.Store(0)
	c.writes.Unlock()
	if err != nil {
		return fmt.Errorf("engine: checkpoint %q: %w", c.Name(), err)
	}
	if err := hook(1); err != nil {
		return err
	}
	old, _, err := c.db.readDesc(c.id)
	if err != nil {
		return err
	}
	desc := checkpointDesc{File: fmt.Sprintf("%08x-%016x.%s", c.id, seq, c.cfg.Index), Seq: seq, Size: int64(buf.Len()), Time: time.Now().UTC()}
	if err := c.db.space.reserveFile(buf.Len()); err != nil {
		return err
	}
	if err := c.db.writeAtomic(c.db.cpPath, desc.File, buf.Bytes()); err != nil {
		return writeError(fmt.Sprintf("checkpoint %q", c.Name()), err)
	}
	if err := hook(2); err != nil {
		return err
	}
	js, _ := json.Marshal(desc)
	b := c.db.pdb.NewBatch()
	defer b.Close()
	b.Set(checkpointKey(c.id), js, nil)
	if err := c.db.commit(b, pebble.Sync, c.Name(), fmt.Sprintf("checkpoint %q: store descriptor", c.Name())); err != nil {
		return err
	}
	if err := hook(3); err != nil {
		return err
	}
	if err := c.db.fail.get(); err != nil {
		return err
	}
	if err := guard(func() error { return c.log.Truncate(seq, pebble.Sync) }); err != nil {
		return writeError(fmt.Sprintf("checkpoint %q", c.Name()), err)
	}
	if err := hook(4); err != nil {
		return err
	}
	// With no write since the last checkpoint the name is the same and the
	// file was just replaced (a rebuild after a damaged checkpoint does
	// that); there is nothing old to remove then.
	if old != nil && old.File != desc.File {
		if err := c.db.fs.Remove(c.db.fs.PathJoin(c.db.cpPath, old.File)); err != nil && !errors.Is(err, errNotExist) {
			c.db.logger.Warn("checkpoint: old file not removed", "collection", c.Name(), "file", old.File, "err", err)
		}
	}
	c.mu.Lock()
	c.loadInfo.lastCheckpoint = desc
	c.mu.Unlock()
	return nil
}

// snapshotSize estimates the size of idx's snapshot (a full layer-0 list
// per node), so that a checkpoint allocates the buffer before it holds the
// index: growing it during WriteTo took most of the time WriteTo held the
// index (docs/performance-notes.md).
func snapshotSize(idx index.Index) int {
	n, per := idx.Len(), 4*idx.Dim()+16
	if x, ok := idx.(index.Compacter); ok {
		n += x.Deleted()
	}
	if h, ok := idx.(*index.HNSW); ok {
		per += 8 * h.Options().M
	}
	return int(min(64+int64(n)*int64(per), 1<<30)) // larger ones grow
}

// writeAtomic writes dir/name: temp file, fsync, rename, fsync of the
// directory. A failed write removes the temp file.
func (db *DB) writeAtomic(dir, name string, data []byte) error {
	final := db.fs.PathJoin(dir, name)
	tmp := final + ".tmp"
	f, err := db.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = db.fs.Rename(tmp, final)
	}
	if err != nil {
		db.fs.Remove(tmp)
		return err
	}
	return db.syncDir(dir)
}

func (db *DB) syncDir(dir string) error { return syncDirOf(db.fs, dir) }

func (db *DB) readDesc(cid uint32) (*checkpointDesc, bool, error) {
	v, closer, err := db.pdb.Get(checkpointKey(cid))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, readError("read checkpoint descriptor", err)
	}
	defer closer.Close()
	var d checkpointDesc
	if err := json.Unmarshal(v, &d); err != nil || d.File == "" {
		// A damaged descriptor only costs a rebuild.
		return nil, true, nil
	}
	return &d, true, nil
}

// reasonNoCheckpoint is the rebuild reason when no checkpoint exists yet.
const reasonNoCheckpoint = "no checkpoint"

// loadInfo records how a collection's index was brought up at Open.
type loadInfo struct {
	how            string // "empty", "checkpoint+replay", "rebuild"
	reason         string // why a rebuild was needed
	replayed       int    // log records replayed
	took           time.Duration
	lastCheckpoint checkpointDesc
	textRebuilt    int    // records whose full-text entry was made at open
	textDamage     string // damaged or orphaned full-text entries found at open
}

// load brings a collection up: records into the maps, then the index from
// its checkpoint plus the log after it, or, failing that, rebuilt from the
// records.
func (c *Collection) load() error {
	start := time.Now()
	if err := c.scanRecords(); err != nil {
		return err
	}
	if err := c.loadText(); err != nil {
		return err
	}
	info := loadInfo{how: "checkpoint+replay", textRebuilt: c.loadInfo.textRebuilt, textDamage: c.loadInfo.textDamage}
	desc, hadDesc, err := c.db.readDesc(c.id)
	if err != nil {
		return err
	}
	switch {
	case desc == nil && !hadDesc && len(c.ids) == 0:
		idx, err := newIndex(c.cfg)
		if err != nil {
			return err
		}
		c.idx, info.how = idx, "empty"
	case desc == nil && !hadDesc:
		info.how, info.reason = "rebuild", reasonNoCheckpoint
	case desc == nil:
		info.how, info.reason = "rebuild", "checkpoint descriptor is damaged"
	default:
		info.lastCheckpoint = *desc
		if err := c.loadCheckpoint(desc, &info); err != nil {
			info.how, info.reason = "rebuild", err.Error()
		}
	}
	if info.how == "rebuild" {
		c.db.logger.Warn("rebuilding index from the records", "collection", c.Name(), "records", len(c.ids), "reason", info.reason)
		t := telemetry.Start(c.db.rec)
		c.idx, err = c.rebuild()
		if t.On() {
			t.Done(metrics.Event{Op: metrics.OpIndexRebuild, Collection: c.Name(), Records: len(c.ids), Err: err})
		}
		if err != nil {
			return err
		}
	}
	info.took = time.Since(start)
	c.loadInfo = info
	if info.how == "rebuild" && len(c.ids) > 0 {
		// Persist the rebuilt index at once, so the next Open is fast and
		// a damaged log is truncated away.
		switch err := c.checkpoint(); {
		case errors.Is(err, ErrNoSpace), errors.Is(err, ErrReadOnly):
			// The records are intact; the next Open that may write
			// rebuilds again or finds the checkpoint.
			c.db.logger.Warn("rebuilt index not checkpointed", "collection", c.Name(), "err", err)
		case err != nil:
			return err
		}
		c.loadInfo.how, c.loadInfo.reason = info.how, info.reason
	}
	return nil
}

// scanRecords reads every record of the collection into the maps (not the
// vectors: replay reads the few it needs, a rebuild scans again).
func (c *Collection) scanRecords() error {
	prefix := cidPrefix(tagRecord, c.id)
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		id := string(it.Key()[len(prefix):])
		v, err := it.ValueAndErr()
		if err != nil {
			return readError(fmt.Sprintf("read record %q of %q", id, c.Name()), err)
		}
		sr, err := decodeRecordOpt(v, false)
		if err == nil && sr.dim != c.cfg.Dimension {
			err = fmt.Errorf("vector has %d dimensions, collection %d", sr.dim, c.cfg.Dimension)
		}
		if err == nil {
			if _, dup := c.keys[sr.key]; dup {
				err = fmt.Errorf("index key %d used twice", sr.key)
			}
		}
		meta, merr := decodeMetadata(sr.meta)
		if err == nil && merr != nil {
			err = fmt.Errorf("metadata: %v", merr)
		}
		if err != nil {
			return fmt.Errorf("%w: record %q of collection %q: %v", ErrCorrupt, id, c.Name(), err)
		}
		c.ids[id], c.keys[sr.key], c.meta[sr.key] = sr.key, id, meta
		c.cacheContent(sr.key, sr.content)
		c.fields.add(sr.key, id, meta)
		c.nextKey = max(c.nextKey, sr.key+1)
	}
	if err := it.Error(); err != nil {
		return readError(fmt.Sprintf("scan %q", c.Name()), err)
	}
	return nil
}

// loadCheckpoint reads the checkpoint file, replays the log after it and
// checks that the index holds exactly the stored records.
func (c *Collection) loadCheckpoint(desc *checkpointDesc, info *loadInfo) error {
	f, err := c.db.fs.Open(c.db.fs.PathJoin(c.db.cpPath, desc.File))
	if err != nil {
		return fmt.Errorf("checkpoint %s: %v", desc.File, err)
	}
	idx, err := index.Read(io.NewSectionReader(f, 0, desc.Size))
	f.Close()
	if err != nil {
		return fmt.Errorf("checkpoint %s: %v", desc.File, err)
	}
	if idx.Dim() != c.cfg.Dimension || idx.Metric() != indexMetric(c.cfg.Metric) {
		return fmt.Errorf("checkpoint %s is for dimension %d, %v", desc.File, idx.Dim(), idx.Metric())
	}
	if h, ok := idx.(*index.HNSW); ok && h.Options().Quantize.String() != quantization(c.cfg) {
		return fmt.Errorf("checkpoint %s has quantization %v", desc.File, h.Options().Quantize)
	}
	c.idx = idx
	err = c.log.Replay(desc.Seq+1, func(r wal.Record) error {
		info.replayed++
		return c.replay(r)
	})
	if err != nil {
		return fmt.Errorf("log replay: %v", err)
	}
	if c.idx.Len() != len(c.ids) {
		return fmt.Errorf("index holds %d vectors after replay, %d records are stored", c.idx.Len(), len(c.ids))
	}
	for k := range c.keys {
		if _, ok := c.idx.Vector(nil, k); !ok {
			return fmt.Errorf("record key %d missing from the index after replay", k)
		}
	}
	return nil
}

// replay makes the index agree with the stored records for every ID a log
// record touched (see logops.go).
func (c *Collection) replay(r wal.Record) error {
	if r.Type != logBatch {
		return fmt.Errorf("%w: log record %d has unknown type %d", ErrCorrupt, r.Seq, r.Type)
	}
	ops, err := decodeOps(r.Payload)
	if err != nil {
		return fmt.Errorf("%w: log record %d: %v", ErrCorrupt, r.Seq, err)
	}
	for _, o := range ops {
		key, ok := c.ids[o.id]
		if ok {
			rec, _, err := c.read(o.id)
			if err != nil {
				return err
			}
			if err := c.idx.Add(key, rec.Vector); err != nil {
				return fmt.Errorf("%w: record %q: %v", ErrCorrupt, o.id, err)
			}
		}
		if !ok || key != o.key {
			c.idx.Delete(o.key)
		}
	}
	return nil
}

// rebuild builds a fresh index from the stored records' vectors, reading
// them in one pass and inserting on every CPU.
func (c *Collection) rebuild() (index.Index, error) {
	idx, err := newIndex(c.cfg)
	if err != nil {
		return nil, err
	}
	type item struct {
		key uint64
		vec []float32
	}
	work := make(chan item, 256)
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if err := idx.Add(it.key, it.vec); err != nil {
					err = fmt.Errorf("%w: record key %d: %v", ErrCorrupt, it.key, err)
					failed.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	prefix := cidPrefix(tagRecord, c.id)
	iter, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err == nil {
		for ok := iter.First(); ok && failed.Load() == nil; ok = iter.Next() {
			sr, derr := decodeRecord(iter.Value())
			if derr != nil {
				derr = fmt.Errorf("%w: record %q of %q: %v", ErrCorrupt, iter.Key()[len(prefix):], c.Name(), derr)
				failed.CompareAndSwap(nil, &derr)
				break
			}
			work <- item{sr.key, sr.vector}
		}
		err = iter.Close()
	}
	close(work)
	wg.Wait()
	if p := failed.Load(); p != nil {
		return nil, *p
	}
	if err != nil {
		return nil, readError(fmt.Sprintf("rebuild %q", c.Name()), err)
	}
	return idx, nil
}
