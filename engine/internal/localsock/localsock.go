// Package localsock serves and dials a Unix socket that only processes
// of the same user on the same machine can use.
//
// Three checks keep others out. The socket file is created with mode
// 0600, so the kernel refuses another user's connect (on systems that
// honour a socket's permissions, Linux among them). Listener.Accept reads
// each peer's credentials from the kernel (SO_PEERCRED on Linux,
// LOCAL_PEERCRED and LOCAL_PEERPID on macOS) and closes a connection
// whose user is not the listener's. Dial checks that the socket file is
// a socket owned by the caller with mode 0600 before connecting, and
// returns the server's credentials as the kernel reports them, so the
// caller can check which process it reached. Where the system cannot
// report a peer's credentials (Windows, the other BSDs), Listen and Dial
// return ErrUnsupported: the service is refused rather than offered
// unchecked.
package localsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrUnsupported reports a system on which peer credentials cannot be
	// checked.
	ErrUnsupported = errors.New("localsock: peer credentials are not available on this system")
	// ErrPeer reports a socket or peer that fails a check: another
	// owner, a wider mode, not a socket, another user at the other end.
	ErrPeer = errors.New("localsock: untrusted peer")
)

// Cred is what the kernel says of the process at the other end of a
// connection.
type Cred struct {
	UID int
	PID int
}

// Listener accepts connections from processes of the same user only. It
// is safe for concurrent use by multiple goroutines.
type Listener struct {
	ln   *net.UnixListener
	path string      // the socket's name as given to Listen
	fi   os.FileInfo // the socket file, to remove only ours at Close
	uid  int
	dir  *os.File // the directory when the path was too long; nil otherwise

	once     sync.Once
	closeErr error
}

// Listen creates a socket at path, mode 0600, and listens on it. A
// socket already at path is removed first: the caller must know that no
// one serves it any more (a database's lock says so). Anything else at
// path is left alone and Listen fails. A path longer than the system's
// limit for socket names is reached through a short name for its
// directory where the system has one (Linux's /proc/self/fd), else
// refused.
func Listen(path string) (*Listener, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, fmt.Errorf("localsock: %s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("localsock: remove stale socket: %w", err)
		}
	}
	name, dir, err := shortName(path)
	if err != nil {
		return nil, err
	}
	closeDir := func() {
		if dir != nil {
			dir.Close()
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		closeDir()
		return nil, fmt.Errorf("localsock: listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false) // Close removes the file, if it is still ours
	// Until the chmod, the socket has the mode the umask leaves: Accept's
	// check of the peer's user covers that moment.
	if err := os.Chmod(name, 0o600); err != nil {
		ln.Close()
		os.Remove(name)
		closeDir()
		return nil, fmt.Errorf("localsock: chmod %s: %w", path, err)
	}
	fi, err := os.Lstat(name)
	if err != nil {
		ln.Close()
		closeDir()
		return nil, fmt.Errorf("localsock: %w", err)
	}
	return &Listener{ln: ln, path: name, fi: fi, uid: os.Getuid(), dir: dir}, nil
}

// Accept waits for a connection from a process of the listener's user
// and returns it with the peer's credentials. Connections from other
// users are closed unanswered.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return nil, err
		}
		cred, err := peerCred(c)
		if err != nil || cred.UID != l.uid {
			c.Close()
			continue
		}
		return c, nil
	}
}

// Close stops listening and removes the socket file, when it is still
// the one Listen made. Closing twice returns the first Close's result.
func (l *Listener) Close() error {
	l.once.Do(func() {
		l.closeErr = l.ln.Close()
		if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.fi) {
			os.Remove(l.path)
		}
		if l.dir != nil {
			l.dir.Close()
		}
	})
	return l.closeErr
}

// Addr returns the listener's address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Dial checks the socket file at path (a socket owned by the caller's
// user, mode 0600), connects to it and returns the connection with the
// credentials of the process that listens, as the kernel reports them.
// A socket that fails a check is ErrPeer; no socket at path wraps
// fs.ErrNotExist.
func Dial(path string) (*net.UnixConn, Cred, error) {
	if err := Supported(); err != nil {
		return nil, Cred{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, Cred{}, fmt.Errorf("localsock: %w", err)
	}
	if err := checkFile(fi); err != nil {
		return nil, Cred{}, fmt.Errorf("%w: %s: %v", ErrPeer, path, err)
	}
	name, dir, err := shortName(path)
	if err != nil {
		return nil, Cred{}, err
	}
	if dir != nil {
		defer dir.Close()
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return nil, Cred{}, fmt.Errorf("localsock: dial %s: %w", path, err)
	}
	cred, err := peerCred(c)
	if err != nil {
		c.Close()
		return nil, Cred{}, err
	}
	if cred.UID != os.Getuid() {
		c.Close()
		return nil, Cred{}, fmt.Errorf("%w: %s is served by user %d", ErrPeer, path, cred.UID)
	}
	return c, cred, nil
}

// checkFile checks the socket file before a connect.
func checkFile(fi os.FileInfo) error {
	if fi.Mode().Type() != os.ModeSocket {
		return errors.New("not a socket")
	}
	if fi.Mode().Perm() != 0o600 {
		return fmt.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	uid, ok := owner(fi)
	if !ok {
		return errors.New("owner unknown")
	}
	if uid != os.Getuid() {
		return fmt.Errorf("owned by user %d", uid)
	}
	return nil
}
