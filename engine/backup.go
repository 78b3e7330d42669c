package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// A backup is a directory that opens as the database did at one moment
// during Backup: Pebble's checkpoint of its store (immutable tables hard
// linked, the manifest and the log copied up to that moment), the index
// checkpoint files the store's descriptors name (hard linked), and the
// identity file. While it is written, the directory holds a marker,
// BACKUP-INCOMPLETE, written first and removed last: Open refuses a
// directory that still has it, so a backup cut short (a crash, a full
// disk, SIGKILL) never opens as a database. Restore is opening the copy:
// its collections come up from their checkpoints plus the log after them,
// as after any restart.

const backupMarker = "BACKUP-INCOMPLETE"

// Backup writes a consistent copy of the database into dir while writers
// go on writing: every write acknowledged before Backup was called is in
// it, and no batch is in it in part. dir must be absent, empty, or hold a
// backup that was cut short (one with BACKUP-INCOMPLETE, which Backup
// clears first); it is created on the database's filesystem, where hard
// links make the copy take little time and space (across filesystems
// Pebble copies the tables). Everything is fsynced before Backup returns
// nil, the new directory's entry in its parent included. A Backup that
// fails (or whose ctx is done) removes what it wrote, so it can be
// retried into the same dir. Background index checkpoints wait while the
// store is captured; writes do not.
func (db *DB) Backup(ctx context.Context, dir string) (err error) {
	done, err := db.enter()
	if err != nil {
		return err
	}
	defer done()
	existed, err := db.backupTarget(dir)
	if err != nil {
		return err
	}
	if err := db.mkdirAll(dir); err != nil {
		return openError(dir, err)
	}
	defer func() {
		if err != nil {
			db.clearBackup(dir, !existed)
		}
	}()
	if err := db.writeAtomic(dir, backupMarker, []byte("a backup is being written here; it is not a database until this file is gone\n")); err != nil {
		return writeError("backup: write marker", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := db.backupStore(dir); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := vfs.Copy(db.fs, db.fs.PathJoin(db.dir, identityFile), db.fs.PathJoin(dir, identityFile)); err != nil {
		return writeError("backup: copy identity", err)
	}
	if err := db.syncFile(db.fs.PathJoin(dir, identityFile)); err != nil {
		return writeError("backup: sync identity", err)
	}
	if err := db.syncDir(dir); err != nil {
		return writeError("backup: sync", err)
	}
	if err := db.fs.Remove(db.fs.PathJoin(dir, backupMarker)); err != nil {
		return writeError("backup: remove marker", err)
	}
	return db.syncDir(dir)
}

// backupTarget checks that dir is absent, empty or an incomplete backup
// (which it clears), and reports whether dir exists.
func (db *DB) backupTarget(dir string) (exists bool, err error) {
	if dir == "" {
		return false, fmt.Errorf("%w: empty backup directory", mnemo.ErrInvalidConfig)
	}
	names, err := db.fs.List(dir)
	switch {
	case errors.Is(err, errNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("engine: backup: %w", err)
	case slices.Contains(names, backupMarker):
		if err := db.clearBackup(dir, false); err != nil {
			return true, fmt.Errorf("engine: backup: clear the incomplete backup in %s: %w", dir, err)
		}
		return true, nil
	case len(names) > 0:
		return true, fmt.Errorf("%w: %s is not empty", ErrBackupTarget, dir)
	}
	return true, nil
}

// clearBackup removes an incomplete backup: everything in dir but the
// marker, then the marker (so that a crash meanwhile leaves a directory
// still marked incomplete), and dir itself when rmdir is set.
func (db *DB) clearBackup(dir string, rmdir bool) error {
	names, err := db.fs.List(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n != backupMarker {
			if err := db.fs.RemoveAll(db.fs.PathJoin(dir, n)); err != nil {
				return err
			}
		}
	}
	if err := db.syncDir(dir); err != nil {
		return err
	}
	if err := db.fs.Remove(db.fs.PathJoin(dir, backupMarker)); err != nil && !errors.Is(err, errNotExist) {
		return err
	}
	if rmdir {
		if err := db.fs.Remove(dir); err != nil {
			return err
		}
		return db.syncDir(db.fs.PathDir(dir))
	}
	return db.syncDir(dir)
}

// backupStore captures Pebble's store into dir, then links the index
// checkpoint files its descriptors name. Checkpoints wait meanwhile, so
// that none of those files is replaced before it is linked.
func (db *DB) backupStore(dir string) error {
	// The collections are listed before cpMu is taken (lock order: db.mu
	// before cpMu). One dropped meanwhile has no descriptor left; one
	// created meanwhile has none yet: both are skipped below.
	db.mu.Lock()
	colls := make([]*Collection, 0, len(db.collections))
	for _, c := range db.collections {
		colls = append(colls, c)
	}
	db.mu.Unlock()
	db.cpMu.Lock()
	defer db.cpMu.Unlock()
	tmp := db.fs.PathJoin(dir, "store.tmp")
	err := guard(func() error { return db.pdb.Checkpoint(tmp, pebble.WithFlushedWAL()) })
	if err != nil {
		return writeError("backup: checkpoint the store", err)
	}
	names, err := db.fs.List(tmp)
	if err != nil {
		return fmt.Errorf("engine: backup: %w", err)
	}
	for _, n := range names {
		if err := db.fs.Rename(db.fs.PathJoin(tmp, n), db.fs.PathJoin(dir, n)); err != nil {
			return fmt.Errorf("engine: backup: %w", err)
		}
	}
	if err := db.fs.Remove(tmp); err != nil {
		return fmt.Errorf("engine: backup: %w", err)
	}
	cpDir := db.fs.PathJoin(dir, checkpointDir)
	if err := db.mkdirAll(cpDir); err != nil {
		return writeError("backup", err)
	}
	for _, c := range colls {
		desc, _, err := db.readDesc(c.id)
		if err != nil {
			return err
		}
		if desc == nil {
			continue // no checkpoint yet: the copy rebuilds this index
		}
		src, dst := db.fs.PathJoin(db.cpPath, desc.File), db.fs.PathJoin(cpDir, desc.File)
		if err := vfs.LinkOrCopy(db.fs, src, dst); err != nil {
			return writeError("backup: link "+desc.File, err)
		}
	}
	return db.syncDir(cpDir)
}

// syncFile fsyncs a file.
func (db *DB) syncFile(path string) error {
	f, err := db.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
