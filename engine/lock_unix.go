//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package engine

import (
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lockHolder returns the process that holds the POSIX lock Pebble takes
// on dir/LOCK, when the system can tell.
func lockHolder(dir string) (int, bool) {
	f, err := os.Open(filepath.Join(dir, "LOCK"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	spec := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &spec); err != nil || spec.Type == unix.F_UNLCK || spec.Pid <= 0 {
		return 0, false
	}
	return int(spec.Pid), true
}
