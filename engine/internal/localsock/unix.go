//go:build linux || darwin

package localsock

import (
	"os"
	"syscall"
)

func supported() error { return nil }

// owner returns the user that owns a file.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
