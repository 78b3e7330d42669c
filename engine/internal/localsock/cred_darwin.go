package localsock

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerCred asks the kernel who is at the other end of c
// (LOCAL_PEERCRED, LOCAL_PEERPID).
func peerCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("localsock: %w", err)
	}
	var xu *unix.Xucred
	var pid int
	var uerr error
	if err := raw.Control(func(fd uintptr) {
		xu, uerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if uerr == nil {
			pid, uerr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		}
	}); err != nil {
		return Cred{}, fmt.Errorf("localsock: %w", err)
	}
	if uerr != nil {
		return Cred{}, fmt.Errorf("localsock: peer credentials: %w", uerr)
	}
	return Cred{UID: int(xu.Uid), PID: pid}, nil
}
