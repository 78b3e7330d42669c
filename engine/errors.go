package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/wal"
)

// Sentinel errors of the embedded database, matched with errors.Is.
// Returned errors wrap them with the details. Bad input is reported with
// package mnemo's sentinels (mnemo.ErrInvalidRecord, mnemo.ErrDimension,
// ...), as every backend reports it.
var (
	// ErrLocked reports a database directory already open in this or
	// another process.
	ErrLocked = errors.New("engine: database is already open")
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
