package engine

import (
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
//	absent or empty (a LOCK or an empty checkpoints/ left
//	by an interrupted creation count as empty)      -> create (unless MustExist)
//	identity or Pebble files present                -> open an existing store only;
//	                                                   a missing store is corruption
//	other files only                                -> ErrNotDatabase
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
	dirEmpty    dirState = iota // absent, or nothing of a database in it
	dirDatabase                 // an identity or Pebble's files
	dirForeign                  // other files only
)

// pebbleFile reports whether name is one of the files a Pebble store
// keeps in its directory.
func pebbleFile(name string) bool {
	for _, p := range []string{"MANIFEST-", "marker.", "OPTIONS-", "CURRENT"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".blob")
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
		switch {
		case n == identityFile || pebbleFile(n):
			return dirDatabase, nil
		case n == "LOCK":
		case n == checkpointDir:
			if sub, err := db.fs.List(db.fs.PathJoin(db.dir, n)); err != nil || len(sub) > 0 {
				state = dirForeign
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
			ErrInvalidConfig, db.dir, id.Format, identityFormat)
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
