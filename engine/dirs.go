package engine

import (
	"errors"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Directories and power loss.
//
// A directory's entry lives in its parent: a directory is only durable
// once its parent has been fsynced after the mkdir. mkdirAll creates
// every missing directory of a path and fsyncs the parent of each, so a
// database, checkpoint or backup directory that a call created survives a
// power cut once the call returns.

// mkdirAll creates dir and any missing parents, fsyncing the parent of
// each directory it created.
func (db *DB) mkdirAll(dir string) error {
	return mkdirAllSynced(db.fs, dir)
}

func mkdirAllSynced(fs vfs.FS, dir string) error {
	var missing []string // deepest first
	for d := dir; ; {
		if _, err := fs.Stat(d); err == nil {
			break
		} else if !errors.Is(err, errNotExist) {
			return err
		}
		missing = append(missing, d)
		parent := fs.PathDir(d)
		if parent == d || parent == "" || parent == "." {
			break
		}
		d = parent
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDirOf(fs, fs.PathDir(missing[i])); err != nil {
			return err
		}
	}
	return nil
}

// syncDirOf fsyncs the directory dir ("" or "." is the working directory).
func syncDirOf(fs vfs.FS, dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// markerFS is the filesystem Pebble gets. Pebble (v2.1.7) moves its
// manifest marker by creating the new marker file, removing the old one
// and only then fsyncing the directory (vfs/atomicfs Marker.Move), after
// creating and fsyncing the new MANIFEST file but not its directory
// entry. A power cut before that directory fsync may keep any subset of
// the three directory changes: the new marker without the MANIFEST it
// names ("could not open manifest file ... does not exist"), or neither
// marker. markerFS fsyncs the directory before a marker is created and
// before one is removed, so each step is durable before the next starts:
// a crash leaves the old marker (whose MANIFEST is still there) or the new
// one with its MANIFEST.
type markerFS struct{ vfs.FS }

func isMarker(fs vfs.FS, name string) bool {
	return strings.HasPrefix(fs.PathBase(name), "marker.")
}

func (m markerFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if isMarker(m.FS, name) {
		if err := syncDirOf(m.FS, m.PathDir(name)); err != nil {
			return nil, err
		}
	}
	return m.FS.Create(name, category)
}

func (m markerFS) Remove(name string) error {
	if isMarker(m.FS, name) {
		if err := syncDirOf(m.FS, m.PathDir(name)); err != nil {
			return err
		}
	}
	return m.FS.Remove(name)
}

func (m markerFS) Unwrap() vfs.FS { return m.FS }
