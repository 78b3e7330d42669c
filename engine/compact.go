package engine

import (
	"context"
	"fmt"
)

// Compact gives the space of deleted and overwritten records back: it
// checkpoints every collection (which drops deleted vectors from the
// index and writes a smaller snapshot) and then has Pebble compact the
// whole key range, so that tables holding deleted records are rewritten
// without them. Queries and writes go on meanwhile: they wait only while a
// collection's index is serialised, not while it is compacted (see
// Collection.Checkpoint). The call takes time in proportion to the
// database's size. The files the compaction replaced are deleted by
// Pebble in the background, so the space comes back shortly after Compact
// returns. Pebble also compacts on its own as data is written, but deleted data in tables nothing else is written to stays
// until a call like this one.
func (db *DB) Compact(ctx context.Context) error {
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	for _, name := range db.Collections() {
		db.mu.Lock()
		c, ok := db.collections[name]
		db.mu.Unlock()
		if !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.checkpoint(); err != nil {
			return err
		}
	}
	if err := db.fail.get(); err != nil {
		return err
	}
	if db.readOnly != nil {
		return db.readOnly
	}
	if err := db.space.reserve(0); err != nil {
		return err
	}
	err = guard(func() error { return db.pdb.Compact(ctx, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff}, true) })
	if err != nil {
		return writeError(fmt.Sprintf("compact %s", db.dir), err)
	}
	return nil
}
