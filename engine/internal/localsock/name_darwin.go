package localsock

import (
	"fmt"
	"os"
)

// maxName is the longest socket name the kernel takes (sun_path is 104
// bytes, one for the terminating NUL).
const maxName = 103

// shortName returns path, or an error when it is too long for a socket
// name: macOS has no short name for a directory.
func shortName(path string) (string, *os.File, error) {
	if len(path) > maxName {
		return "", nil, fmt.Errorf("localsock: socket name %s is longer than %d bytes", path, maxName)
	}
	return path, nil, nil
}
