//go:build linux || darwin

package localsock

import (
	"os"
	"syscall"
)

// Supported reports ErrUnsupported on a system where peer credentials
// cannot be checked, nil elsewhere.
func Supported() error { return nil }

// owner returns the user that owns a file.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
