package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo"
)

// ReplaceCollection makes the collection named with the one named name,
// atomically: name's records are deleted and with's collection takes its
// name, in one synced commit, so a reader or a restart sees the old
// collection under name or the new one, never a mix or neither. with
// must exist and differ from name; name must exist.
//
// Writes to name wait while ReplaceCollection runs final, which sees
// name's collection with no write in flight and none to come, and may
// bring with up to date (the last catch-up of a copy); reads go on. So do
// writes to other collections, but no collection is created, dropped or
// checkpointed meanwhile: keep final short. final may read both
// collections and write with, nothing else of the database. When
// final returns an error, nothing is replaced and the error is returned.
// Writes that waited fail afterwards with mnemo.ErrCollectionNotFound, as
// after DropCollection, so a writer that reopens name finds the new
// collection. Handles of with go on working, under the new name.
func (db *DB) ReplaceCollection(ctx context.Context, name, with string, final func(ctx context.Context, old, new *Collection) error) error {
	done, err := db.enter() // Close waits for the whole call, final too
	if err != nil {
		return err
	}
	defer done()
	if name == with {
		return fmt.Errorf("%w: a collection cannot replace itself (%q)", mnemo.ErrInvalidConfig, name)
	}
	old, err := db.Collection(name)
	if err != nil {
		return err
	}
	repl, err := db.Collection(with)
	if err != nil {
		return err
	}
	// The lock order (see DB): the catalog, checkpoints, then old's
	// writes, which wait from here on; a write that passed enter already
	// has finished when Lock returns. final writes to repl, whose write
	// lock is taken after it.
	db.mu.Lock()
	defer db.mu.Unlock()
	db.cpMu.Lock()
	defer db.cpMu.Unlock()
	old.writes.Lock()
	defer old.writes.Unlock()
	if db.collections[name] != old || db.collections[with] != repl {
		return fmt.Errorf("%w: %q or %q was dropped meanwhile", mnemo.ErrCollectionNotFound, name, with)
	}
	if final != nil {
		if err := final(ctx, old, repl); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	repl.writes.Lock()
	defer repl.writes.Unlock()
	desc, _, _ := db.readDesc(old.id)
	js, _ := json.Marshal(stored{ID: repl.id, Config: repl.cfg})
	b := db.pdb.NewBatch()
	defer b.Close()
	b.Delete(configKey(with), nil)
	b.Set(configKey(name), js, nil)
	for _, tag := range []byte{tagRecord, tagLog, tagText} {
		p := cidPrefix(tag, old.id)
		b.DeleteRange(p, prefixEnd(p), nil)
	}
	b.Delete(checkpointKey(old.id), nil)
	b.Delete(sequenceKey(old.id), nil)
	if err := db.commit(b, pebble.Sync, "", fmt.Sprintf("replace %q with %q", name, with)); err != nil {
		return err
	}
	old.dropped.Store(true)
	repl.name.Store(&name)
	delete(db.collections, with)
	db.collections[name] = repl
	if err := db.mark.dropped(old.id); err != nil {
		db.logger.Warn("sequence mark not updated for a replaced collection", "collection", name, "err", err)
	}
	if desc != nil {
		db.fs.Remove(db.fs.PathJoin(db.cpPath, desc.File))
	}
	return nil
}
