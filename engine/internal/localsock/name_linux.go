package localsock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// maxName is the longest socket name the kernel takes (sun_path is 108
// bytes, one for the terminating NUL).
const maxName = 107

// shortName returns a name for path the kernel takes: path itself when
// short enough, else the same file through /proc/self/fd and an open
// descriptor of its directory, returned for the caller to close once the
// name is no longer used.
func shortName(path string) (string, *os.File, error) {
	if len(path) <= maxName {
		return path, nil, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, fmt.Errorf("localsock: %w", err)
	}
	name := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)
	if len(name) > maxName {
		dir.Close()
		return "", nil, fmt.Errorf("localsock: socket name %s is longer than %d bytes", path, maxName)
	}
	return name, dir, nil
}
