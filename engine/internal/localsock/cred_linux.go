package localsock

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerCred asks the kernel who is at the other end of c (SO_PEERCRED).
func peerCred(c *net.UnixConn) (Cred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Cred{}, fmt.Errorf("localsock: %w", err)
	}
	var uc *unix.Ucred
	var uerr error
	if err := raw.Control(func(fd uintptr) {
		uc, uerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Cred{}, fmt.Errorf("localsock: %w", err)
	}
	if uerr != nil {
		return Cred{}, fmt.Errorf("localsock: peer credentials: %w", uerr)
	}
	return Cred{UID: int(uc.Uid), PID: int(uc.Pid)}, nil
}
