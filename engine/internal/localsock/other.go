//go:build !(linux || darwin)

package localsock

import (
	"net"
	"os"
)

// Supported reports ErrUnsupported on a system where peer credentials
// cannot be checked, nil elsewhere.
func Supported() error { return ErrUnsupported }

func peerCred(*net.UnixConn) (Cred, error) { return Cred{}, ErrUnsupported }

func owner(os.FileInfo) (int, bool) { return 0, false }

func shortName(string) (string, *os.File, error) { return "", nil, ErrUnsupported }
