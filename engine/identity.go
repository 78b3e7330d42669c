package engine

import (
	"github.com/mnemodb/mnemo"

	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
)

// A database directory knows it is one: at creation mnemo writes an
// identity file, MNEMO, beside Pebble's files:
//
//	{"format": 1, "id": "<uuid v4>", "created": "<RFC 3339 time>"}
//
// written atomically (temp file, fsync, rename, directory fsync) right
// after Pebble has created its store. Open uses the directory's contents
// to decide what it may do:
//
//	absent, empty, or only what an interrupted
//	creation leaves (see evidence)                  -> create (unless MustExist)
//	evidence of a database (identity, manifest
//	marker, tables, a log with data, checkpoints)   -> open an existing store only;
//	                                                   a missing store is corruption
//	other files                                     -> ErrNotDatabase
//
// So losing a Pebble file (its MANIFEST marker, say) is reported as damage
// and never answered by a fresh, empty store over the old files. A store
// with Pebble's files but no identity (a crash between the two steps of
// creation, or a database made before identity files existed) is opened
// and gets its identity then.

const (
	identityFile   = "MNEMO"
	identityFormat = 1
)

type identity struct {
	Format  int       `json:"format"`
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

// dirState is what Open found in a database directory.
type dirState int

const (
	dirEmpty         dirState = iota // absent, or nothing of a database in it
	dirDatabase                      // an identity or Pebble's files
	dirForeign                       // other files only
	dirPartialBackup                 // a backup cut short (see backup.go)
)

// evidence reports whether a file of the directory shows that a database
// was created there: the identity, Pebble's manifest marker (or the CURRENT
// file of older stores), a table, a log with data, the sequence mark. What
// Pebble writes before it marks a new store as created (a first MANIFEST,
// OPTIONS, the format marker, an empty log, temporary files) is not: a
// crash in the middle of creation leaves only those, and nothing was
// acknowledged yet.
func (db *DB) evidence(name string) bool {
	switch {
	case name == identityFile, name == seqMarkFile, name == "CURRENT",
		strings.HasPrefix(name, "marker.manifest."),
		strings.HasSuffix(name, ".sst"), strings.HasSuffix(name, ".blob"):
		return true
	case strings.HasSuffix(name, ".log"):
		st, err := db.fs.Stat(db.fs.PathJoin(db.dir, name))
		return err != nil || st.Size() > 0
	}
	return false
}

// creationLeftover reports a file an interrupted creation may leave.
func creationLeftover(name string) bool {
	for _, p := range []string{"MANIFEST-", "OPTIONS-", "marker.", "LOCK", liveSocket} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".dbtmp") || strings.HasSuffix(name, ".tmp")
}

// inspectDir classifies the database directory.
func (db *DB) inspectDir() (dirState, error) {
	names, err := db.fs.List(db.dir)
	if errors.Is(err, errNotExist) {
		return dirEmpty, nil
	}
	if err != nil {
		return 0, fmt.Errorf("engine: read %s: %w", db.dir, err)
	}
	state := dirEmpty
	for _, n := range names {
		if n == backupMarker {
			return dirPartialBackup, nil
		}
	}
	for _, n := range names {
		switch {
		case db.evidence(n):
			return dirDatabase, nil
		case creationLeftover(n):
		case n == checkpointDir:
			if sub, err := db.fs.List(db.fs.PathJoin(db.dir, n)); err != nil || len(sub) > 0 {
				return dirDatabase, nil
			}
		default:
			state = dirForeign
		}
	}
	return state, nil
}

// readIdentity reads the identity file; ok is false when there is none.
func (db *DB) readIdentity() (id identity, ok bool, err error) {
	f, err := db.fs.Open(db.fs.PathJoin(db.dir, identityFile))
	if errors.Is(err, errNotExist) {
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, fmt.Errorf("engine: read %s: %w", identityFile, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return identity{}, false, fmt.Errorf("engine: read %s: %w", identityFile, err)
	}
	if err := json.Unmarshal(b, &id); err != nil || id.Format < 1 || uuid.Validate(id.ID) != nil {
		return identity{}, true, fmt.Errorf("%w: identity file %s is damaged", ErrCorrupt, identityFile)
	}
	if id.Format > identityFormat {
		return identity{}, true, fmt.Errorf("%w: %s has format %d; this version of mnemo reads format %d",
			mnemo.ErrInvalidConfig, db.dir, id.Format, identityFormat)
	}
	return id, true, nil
}

// writeIdentity gives the database an identity file.
func (db *DB) writeIdentity() (identity, error) {
	id := identity{Format: identityFormat, ID: uuid.NewString(), Created: time.Now().UTC().Truncate(time.Second)}
	js, _ := json.Marshal(id)
	if err := db.writeAtomic(db.dir, identityFile, append(js, '\n')); err != nil {
		return identity{}, writeError("write "+identityFile, err)
	}
	return id, nil
}
