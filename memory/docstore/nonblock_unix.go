//go:build unix

package docstore

import "syscall"

// openNonblock is added to the flags a Store opens files with, so that
// opening a named pipe returns at once instead of waiting for a writer.
const openNonblock = syscall.O_NONBLOCK
