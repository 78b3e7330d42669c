package mnemo

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Locker is implemented by a Store that can hold a named lock for every
// handle and process that opens the same data: the embedded engine (one
// process at a time holds a database, so a lock in that process covers
// it) and package postgres (a server-side advisory lock). The memory
// adapters take one for what must have a single writer, such as a stored
// conversation window's session. Implementations are safe for concurrent
// use by multiple goroutines.
type Locker interface {
	// TryLock takes the lock called name without waiting, or fails with
	// an error wrapping ErrLockHeld while another handle holds it. The lock
	// is held until Unlock, or until the database is closed (the engine's
	// DB; a server Store's Close).
	TryLock(ctx context.Context, name string) (Lock, error)
}

// CheckLockName reports whether name can name a lock on every backend:
// valid UTF-8 without U+0000 (ErrInvalidConfig otherwise). Lockers check
// it, so that a name one backend refuses is refused by all.
func CheckLockName(name string) error {
	if !utf8.ValidString(name) || strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("%w: lock name %q: want UTF-8 without U+0000", ErrInvalidConfig, name)
	}
	return nil
}

// Lock is a lock a Locker granted. Implementations are safe for
// concurrent use by multiple goroutines.
type Lock interface {
	// Check reports whether the lock is still held: nil, or an error
	// wrapping ErrLockLost when it was lost without an Unlock (its
	// database was closed, or a server ended the connection that held
	// it), or the error of a server that did not answer. A holder checks
	// before each write that only the holder may make.
	Check(ctx context.Context) error
	// Unlock releases the lock; a second call does nothing.
	Unlock() error
}

// Unwrapper is implemented by a Store that wraps another (to trace or
// count its calls, say): TryLock takes its locks from the Store it wraps,
// and engine.DBOf finds the database behind it. Unwrap must be safe for
// concurrent use, as the Store is.
type Unwrapper interface {
	Unwrap() Store
}

// TryLock takes the lock called name in s when s is a Locker, or wraps
// one (Unwrapper); a Store that is neither holds no locks, and gets a
// Lock that does nothing: then nothing keeps two handles from taking the
// same name.
func TryLock(ctx context.Context, s Store, name string) (Lock, error) {
	if l, ok := unwrapTo[Locker](s); ok {
		return l.TryLock(ctx, name)
	}
	return noLock{}, nil
}

// unwrapTo returns s, or the first Store s wraps (Unwrapper, at any
// depth), that implements T.
func unwrapTo[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(Unwrapper)
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

type noLock struct{}

func (noLock) Check(context.Context) error { return nil }
func (noLock) Unlock() error               { return nil }
