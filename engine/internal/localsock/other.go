//go:build !(linux || darwin)

package localsock

import (
	"net"
	"os"
)

func supported() error { return ErrUnsupported }

func peerCred(*net.UnixConn) (Cred, error) { return Cred{}, ErrUnsupported }

func owner(os.FileInfo) (int, bool) { return 0, false }

func shortName(string) (string, *os.File, error) { return "", nil, ErrUnsupported }
