package engine

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A full disk must fail writes with an error, never hang them or take the
// process down. Pebble itself treats a failed write to its log as fatal
// and, when a flush or compaction cannot write, retries it in the
// background while commits wait for memtable space: on a full disk a
// write could wait forever. So, as CockroachDB does for Pebble, mnemo
// refuses writes while the filesystem's free space is below a floor
// (Options.MinFreeSpace, default 64 MiB): the floor leaves Pebble room to
// flush, compact and write its MANIFEST, and mnemo room for checkpoints.
// A refused write changes nothing and returns ErrNoSpace; once space is
// free again writes succeed, without a reopen. Open itself must not write
// on a full disk (Pebble writes a new manifest and log there, and waits
// forever when it cannot): an existing database found below the floor is
// opened read-only, and its writes fail with ErrNoSpace until a reopen
// with space. Close flushes Pebble only when it finds the space to. A write that still meets a
// full disk inside Pebble (another process filled it faster than the
// check saw) fails with ErrNoSpace too, and so does every later call until
// the database is reopened (see fatal.go).

const (
	defaultMinFreeSpace = 64 << 20
	minFreeSpaceFloor   = 32 << 20
)

// spaceGuard checks free space before writes. Between two questions to
// the filesystem it estimates what was used as writeAmp times the bytes
// written to Pebble (Pebble writes a byte to its log, then to a table,
// then again in compactions) plus the bytes of checkpoint files (written
// once), and it asks again every recheckEvery, after recheckBytes written
// to Pebble, or on every write once the estimate comes within nearFloor
// of the floor. So a write costs a statfs only now and then,
// and every write near the floor sees the real figure.
type spaceGuard struct {
	fs    vfs.FS
	dir   string
	floor uint64

	// mu protects the following fields.
	mu          sync.Mutex
	checked     time.Time
	avail       uint64 // free bytes at the last check
	since       uint64 // bytes written since the last check
	unsupported bool   // the filesystem cannot tell its free space
}

const (
	recheckEvery = 250 * time.Millisecond
	recheckBytes = 1 << 20
	writeAmp     = 4
	nearFloor    = 16 << 20
)

func newSpaceGuard(fs vfs.FS, dir string, floor int64) *spaceGuard {
	g := &spaceGuard{fs: fs, dir: dir}
	if floor > 0 {
		g.floor = uint64(floor)
	}
	return g
}

// reserve reports ErrNoSpace when the free space is below the floor, and
// counts n bytes about to be written to Pebble (writeAmp times n, for
// its log, tables and compactions).
func (g *spaceGuard) reserve(n int) error { return g.reserveBytes(writeAmp * uint64(n)) }

// reserveFile is reserve for n bytes written once, to a file of mnemo's
// own (a checkpoint): no amplification.
func (g *spaceGuard) reserveFile(n int) error { return g.reserveBytes(uint64(n)) }

func (g *spaceGuard) reserveBytes(n uint64) error {
	if g.floor == 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.unsupported {
		return nil
	}
	g.since += n
	if time.Since(g.checked) >= recheckEvery || g.since >= writeAmp*recheckBytes || g.avail < g.floor+nearFloor+g.since {
		u, err := g.fs.GetDiskUsage(g.dir)
		if err != nil {
			if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, vfs.ErrUnsupported) {
				g.unsupported = true
				return nil
			}
			return fmt.Errorf("engine: free space of %s: %w", g.dir, err)
		}
		g.checked, g.avail, g.since = time.Now(), u.AvailBytes, n
	}
	if g.avail < g.floor+g.since {
		g.since -= n
		return fmt.Errorf("%w: %s has %s free; this write (an estimated %s with what was written since the last look) would go below the %s floor (Options.MinFreeSpace)",
			ErrNoSpace, g.dir, sizeString(g.avail), sizeString(g.since+n), sizeString(g.floor))
	}
	return nil
}

// low asks the filesystem now whether its free space is below the floor
// (false when there is no floor or the filesystem cannot tell).
func (g *spaceGuard) low() bool {
	if g.floor == 0 {
		return false
	}
	u, err := g.fs.GetDiskUsage(g.dir)
	return err == nil && u.AvailBytes < g.floor
}

// errLowAtOpen is the error of a write to a database opened read-only
// because free space was below the floor.
func (g *spaceGuard) errLowAtOpen() error {
	return fmt.Errorf("%w: %s had less free space than the %s floor when it was opened, so it was opened for reading only; reopen it once space is free",
		ErrNoSpace, g.dir, sizeString(g.floor))
}

// sizeString formats a byte count for messages.
func sizeString(n uint64) string {
	const mib = 1 << 20
	if n >= mib {
		return fmt.Sprintf("%.2f MiB", float64(n)/mib)
	}
	return fmt.Sprintf("%d bytes", n)
}

// isNoSpace reports whether err says the disk is full.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrNoSpace)
}

// writeError maps an error from a write to Pebble or a checkpoint file to
// what it means for the caller.
func writeError(what string, err error) error {
	for _, known := range []error{ErrNoSpace, ErrFailed, ErrCorrupt} {
		if errors.Is(err, known) {
			return err
		}
	}
	if isNoSpace(err) {
		return fmt.Errorf("%w: %s: %v", ErrNoSpace, what, err)
	}
	return fmt.Errorf("engine: %s: %w", what, err)
}
