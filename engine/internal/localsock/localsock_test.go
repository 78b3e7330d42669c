//go:build linux || darwin

package localsock

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestListenDial(t *testing.T) {
	dirs := map[string]string{"short": t.TempDir()}
	if runtime.GOOS == "linux" {
		long := filepath.Join(t.TempDir(), strings.Repeat("x", 80), strings.Repeat("y", 80))
		if err := os.MkdirAll(long, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs["long"] = long
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "s.sock")
			ln, err := Listen(path)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
				t.Fatalf("socket file: %v %v", fi, err)
			}
			accepted := make(chan error, 1)
			go func() {
				c, err := ln.Accept()
				if err == nil {
					c.Close()
				}
				accepted <- err
			}()
			c, cred, err := Dial(path)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			if err := <-accepted; err != nil {
				t.Fatal(err)
			}
			if cred.PID != os.Getpid() || cred.UID != os.Getuid() {
				t.Fatalf("cred %+v, want pid %d uid %d", cred, os.Getpid(), os.Getuid())
			}
			// A second Listen replaces the socket the first left.
			ln.Close()
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("socket after Close: %v", err)
			}
		})
	}
}

func TestDialRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.sock")
	if _, _, err := Dial(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no socket: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Dial(path); !errors.Is(err, ErrPeer) {
		t.Fatalf("a regular file: %v", err)
	}
	if _, err := Listen(path); err == nil {
		t.Fatal("Listen replaced a regular file")
	}
	os.Remove(path)
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(path, 0o660)
	if _, _, err := Dial(path); !errors.Is(err, ErrPeer) {
		t.Fatalf("mode 0660: %v", err)
	}
}
