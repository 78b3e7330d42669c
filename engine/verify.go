package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"fmt"
	"io"
	"math"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/simd"
	"github.com/mnemodb/mnemo/wal"
)

// Verify checks the database's consistency and returns every problem it
// finds (nil when there is none): each collection's log must decode record
// by record, its checkpoint file (if any) must load and match the config,
// and its index must hold exactly the stored records, each under its key
// with its vector. A collection that Open had to rebuild is reported too,
// with the reason. Verify reads everything: O(records + log). It may run
// while others write: each collection is checked at one moment, its
// writes (and the database's checkpoints) waiting meanwhile, so a write
// to a collection can wait for as long as that collection's check.
func (db *DB) Verify(ctx context.Context) ([]string, error) {
	done, err := db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	var problems []string
	for _, name := range db.Collections() {
		db.mu.Lock()
		c, ok := db.collections[name]
		db.mu.Unlock()
		if !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var ps []string
		if err := guard(func() (err error) { ps, err = c.verifyQuiet(ctx); return err }); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err // what was checked so far says nothing of the rest
		}
		for _, p := range ps {
			problems = append(problems, fmt.Sprintf("collection %q: %s", name, p))
		}
	}
	return problems, nil
}

// verifyQuiet verifies c while its writes and the database's
// checkpoints wait, so that the log, the checkpoint, the index and the
// records it compares are of one moment.
func (c *Collection) verifyQuiet(ctx context.Context) ([]string, error) {
	c.db.cpMu.Lock()
	defer c.db.cpMu.Unlock()
	c.writes.Lock()
	defer c.writes.Unlock()
	if c.dropped.Load() {
		return nil, nil
	}
	return c.verify(ctx)
}

func (c *Collection) verify(ctx context.Context) ([]string, error) {
	var ps []string
	c.mu.RLock()
	info := c.loadInfo
	c.mu.RUnlock()
	// A rebuild because no checkpoint existed yet (a crash before the
	// first one) is normal operation; any other reason is damage.
	if info.how == "rebuild" && info.reason != reasonNoCheckpoint {
		ps = append(ps, "index was rebuilt at open: "+info.reason)
	}
	n := 0
	if err := c.log.Replay(0, func(r wal.Record) error {
		n++
		if r.Type != logBatch {
			ps = append(ps, fmt.Sprintf("log record %d has unknown type %d", r.Seq, r.Type))
		} else if _, err := decodeOps(r.Payload); err != nil {
			ps = append(ps, fmt.Sprintf("log record %d: %v", r.Seq, err))
		}
		return nil
	}); err != nil {
		ps = append(ps, fmt.Sprintf("log after %d good records: %v", n, err))
	}
	desc, had, err := c.db.readDesc(c.id)
	switch {
	case err != nil:
		return nil, err
	case had && desc == nil:
		ps = append(ps, "checkpoint descriptor is damaged")
	case desc != nil:
		if p := c.verifyCheckpointFile(desc); p != "" {
			ps = append(ps, p)
		}
	}
	if info.textDamage != "" {
		ps = append(ps, "full-text index was repaired at open: "+info.textDamage)
	}
	ps = append(ps, c.verifyIndex(ctx)...)
	return append(ps, c.verifyText(ctx)...), nil
}

func (c *Collection) verifyCheckpointFile(desc *checkpointDesc) string {
	f, err := c.db.fs.Open(c.db.fs.PathJoin(c.db.cpPath, desc.File))
	if err != nil {
		return fmt.Sprintf("checkpoint %s: %v", desc.File, err)
	}
	defer f.Close()
	idx, err := index.Read(io.NewSectionReader(f, 0, desc.Size))
	if err != nil {
		return fmt.Sprintf("checkpoint %s: %v", desc.File, err)
	}
	if idx.Dim() != c.cfg.Dimension || idx.Metric() != indexMetric(c.cfg.Metric) {
		return fmt.Sprintf("checkpoint %s is for dimension %d, %v", desc.File, idx.Dim(), idx.Metric())
	}
	if x, ok := idx.(index.Checker); ok {
		if err := x.Check(); err != nil {
			return fmt.Sprintf("checkpoint %s: %v", desc.File, err)
		}
	}
	return ""
}

// verifyIndex compares the live index with the stored records.
func (c *Collection) verifyIndex(ctx context.Context) []string {
	var ps []string
	bad := func(format string, a ...any) {
		if len(ps) < 20 {
			ps = append(ps, fmt.Sprintf(format, a...))
		}
	}
	if x, ok := c.idx.(index.Checker); ok {
		if err := x.Check(); err != nil {
			bad("index invariants: %v", err)
		}
	}
	records := 0
	after := ""
	for {
		if ctx.Err() != nil {
			return ps // Verify reports the cancellation, not damage
		}
		page, next, err := c.scan(after, 1000) // not Scan: no nested enter
		if err != nil {
			bad("records: %v", err)
			break
		}
		for _, r := range page {
			records++
			c.mu.RLock()
			key, ok := c.ids[r.ID]
			c.mu.RUnlock()
			if !ok {
				bad("record %q is not in the key map", r.ID)
				continue
			}
			v, ok := c.idx.Vector(nil, key)
			if !ok {
				bad("record %q (key %d) is missing from the index", r.ID, key)
				continue
			}
			want := r.Vector
			if c.cfg.Metric == mnemo.Cosine {
				want = append([]float32(nil), want...)
				simd.Normalize(want)
			}
			for i := range v {
				if math.Abs(float64(v[i]-want[i])) > 1e-5 {
					bad("record %q: the index holds another vector", r.ID)
					break
				}
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	if n := c.idx.Len(); n != records {
		bad("index holds %d vectors, %d records are stored", n, records)
	}
	return ps
}
