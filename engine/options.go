package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
)

// Options configure a DB. A nil *Options is valid; a zero field means its
// documented default.
type Options struct {
	// InMemory keeps everything in memory (Pebble's in-memory filesystem):
	// the same behaviour minus files, gone at Close. The directory passed to
	// Open is then only a name.
	InMemory bool
	// NoSync acknowledges writes before they reach stable storage. A crash
	// may then lose the most recent acknowledged writes (never corrupt
	// older ones). Default false: every Upsert and Delete that returns nil
	// is on stable storage.
	NoSync bool
	// CheckpointEvery is the number of log records after which a
	// collection's index is checkpointed in the background. Default 20,000;
	// negative disables automatic checkpoints (Close still writes one).
	CheckpointEvery int
	// CacheSize is Pebble's block cache in bytes. Default 32 MiB.
	CacheSize int64
	// Logger receives the engine's and Pebble's diagnostic messages as
	// structured records: warnings (an index rebuilt at open, a
	// checkpoint that failed in the background, damage repaired) and
	// errors at their levels, Pebble's informational chatter at Debug.
	// Each record carries the attributes that identify it (collection,
	// file, records, err). Default: discarded.
	Logger *slog.Logger
	// Log is the older form of Logger, kept for compatibility: when set
	// and Logger is not, the engine logs to it through a
	// slog.TextHandler at Debug level. Logger wins when both are set.
	Log io.Writer
	// Metrics, when set, receives an event for every upsert, delete,
	// query, commit, synced commit, checkpoint and rebuild at open (see
	// package metrics for the operations and their fields). It is called
	// on the operation's goroutine and must be safe for concurrent use.
	// Default nil: no event is built and no clock is read.
	Metrics metrics.Recorder
	// MustExist makes Open fail with ErrNoDatabase instead of creating a
	// database when dir is absent or empty. Tools that only read or repair
	// a database set it, so a mistyped path is an error, not a new
	// database. (Open never creates a database in a directory that holds
	// other files: that is ErrNotDatabase.)
	MustExist bool
	// ReadOnly opens an existing database without writing to it: no
	// checkpoint, identity or sequence mark is written, Pebble's log is
	// replayed in memory only, and every write returns ErrReadOnly (an
	// index that needs a rebuild is rebuilt in memory). Verify and the
	// CLI's read commands use it. The directory is still locked (Pebble
	// creates its LOCK file if missing and takes the lock, the one write
	// left): Pebble cannot share a store with a writer, so a database open
	// in another process is ErrLocked, naming that process where the
	// system can tell, and a database on a read-only filesystem cannot be
	// opened (copy it first).
	ReadOnly bool
	// MinFreeSpace is the free space, in bytes, below which writes are
	// refused with ErrNoSpace, so that a full disk fails writes cleanly
	// instead of stalling or failing Pebble's log. Default 64 MiB; at
	// least 32 MiB (Pebble preallocates each log file and needs room to
	// flush and compact: with less, a write can stall behind a flush that
	// cannot finish). Negative disables the check: then a full disk fails
	// the write that meets it in Pebble's log and every later call until
	// a reopen, or stalls writes while Pebble retries a flush.
	MinFreeSpace int64
	// NoLiveAccess turns live access off: by default a database opened
	// for writing in a directory (not InMemory, not ReadOnly, not on FS)
	// serves read-only requests and backups to other processes of the
	// same user on the same machine, over a Unix socket in the directory
	// (live.sock, mode 0600; see DialLive and docs/live-access.md).
	NoLiveAccess bool
	// FS, when set, replaces the filesystem (tests use a crashable
	// in-memory one). InMemory is ignored then.
	FS vfs.FS
}

const (
	defaultCheckpointEvery = 20000
	defaultCacheSize       = 32 << 20
)

// Validate reports every problem with the options at once.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.MinFreeSpace > 0 && o.MinFreeSpace < minFreeSpaceFloor {
		errs = append(errs, fmt.Errorf("%w: MinFreeSpace is %d, below the %d bytes Pebble needs to rotate its log and flush (negative disables the check)",
			mnemo.ErrInvalidConfig, o.MinFreeSpace, int64(minFreeSpaceFloor)))
	}
	if o.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("%w: CacheSize is %d", mnemo.ErrInvalidConfig, o.CacheSize))
	}
	return errors.Join(errs...)
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.CheckpointEvery == 0 {
		r.CheckpointEvery = defaultCheckpointEvery
	}
	if r.MinFreeSpace == 0 {
		r.MinFreeSpace = defaultMinFreeSpace
	}
	if r.CacheSize == 0 {
		r.CacheSize = defaultCacheSize
	}
	if r.FS == nil {
		if r.InMemory {
			r.FS = vfs.NewMem()
		} else {
			r.FS = vfs.Default
		}
	}
	if r.Logger == nil {
		r.Logger = telemetry.Logger(telemetry.WriterLogger(r.Log))
	}
	return r
}
