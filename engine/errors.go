package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/wal"
)

// Sentinel errors, matched with errors.Is. Returned errors wrap them with
// the details.
var (
	// ErrClosed reports use of a closed DB or of a collection of one.
	ErrClosed = errors.New("engine: database is closed")
	// ErrLocked reports a database directory already open in this or
	// another process.
	ErrLocked = errors.New("engine: database is already open")
	// ErrCollectionNotFound reports an unknown (or dropped) collection.
	ErrCollectionNotFound = errors.New("engine: collection not found")
	// ErrCollectionExists reports a create whose config differs from the
	// existing collection's.
	ErrCollectionExists = errors.New("engine: collection exists with another config")
	// ErrInvalidConfig reports an unusable collection config or options.
	ErrInvalidConfig = errors.New("engine: invalid config")
	// ErrInvalidID reports an empty, over-long or non-UTF-8 record ID.
	ErrInvalidID = errors.New("engine: invalid record id")
	// ErrInvalidRecord reports bad content or metadata, or a duplicate ID
	// in one batch.
	ErrInvalidRecord = errors.New("engine: invalid record")
	// ErrBatchTooLarge reports an Upsert whose records hold more than
	// MaxBatchBytes together; split it into several calls.
	ErrBatchTooLarge = errors.New("engine: batch too large")
	// ErrDimension, ErrNonFinite and ErrZeroVector report bad vectors.
	ErrDimension  = index.ErrDimension
	ErrNonFinite  = index.ErrNonFinite
	ErrZeroVector = index.ErrZeroVector
	// ErrBadFilter reports a malformed metadata filter.
	ErrBadFilter = errors.New("engine: bad filter")
	// ErrBadQuery reports a malformed query (k, ef, similarity bounds).
	ErrBadQuery = errors.New("engine: bad query")
	// ErrNoDatabase reports an Open with Options.MustExist of a directory
	// that is absent or holds no database.
	ErrNoDatabase = errors.New("engine: no database")
	// ErrNotDatabase reports an Open of a directory that is not empty and
	// holds no mnemo database: Open never creates one among other files.
	ErrNotDatabase = errors.New("engine: not a mnemo database")
	// ErrBackupTarget reports a backup into a directory that is not empty.
	ErrBackupTarget = errors.New("engine: backup directory is not empty")
	// ErrReadOnly reports a write to a database opened with
	// Options.ReadOnly.
	ErrReadOnly = errors.New("engine: database is read-only")
	// ErrNoSpace reports a write refused or failed for lack of disk space
	// (see Options.MinFreeSpace). A refused write changed nothing.
	ErrNoSpace = errors.New("engine: no space left on device")
	// ErrFailed reports a database that met a fatal error in Pebble (other
	// than corruption, ErrCorrupt, or a full disk, ErrNoSpace): every later
	// call fails until it is reopened.
	ErrFailed = errors.New("engine: database failed")
	// ErrCorrupt is matched by every corruption the engine detects in what
	// it reads from disk. Test for it with IsCorruption.
	ErrCorrupt = errors.New("engine: corruption")
	// ErrNormOverflow reports a vector under the cosine metric whose
	// components are finite but whose norm overflows float32.
	ErrNormOverflow = index.ErrNormOverflow
)

// IsCorruption reports whether err was caused by damaged data on disk: a
// record, log entry or checkpoint that failed validation, a Pebble file
// that failed its checksum or is missing, or writes lost from Pebble's log.
func IsCorruption(err error) bool {
	return errors.Is(err, ErrCorrupt) || wal.IsCorruption(err) || index.IsCorruption(err) || pebble.IsCorruptionError(err)
}

// readError wraps an error from a read of Pebble. Corruption becomes
// ErrCorrupt with Pebble's message on one line (its corruption errors
// carry a second, internal line).
func readError(what string, err error) error {
	if pebble.IsCorruptionError(err) {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return fmt.Errorf("%w: %s: %s", ErrCorrupt, what, msg)
	}
	return fmt.Errorf("engine: %s: %w", what, err)
}
