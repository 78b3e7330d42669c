// Package ctxsync has a mutex whose Lock gives up when a context is done,
// for the memory adapters, which hold a lock across calls to a store that
// may be a server: a caller with a deadline must not wait past it behind
// another caller's slow round trip.
package ctxsync

import (
	"context"
	"sync"
)

// Mutex is a mutual exclusion lock. The zero value is an unlocked mutex.
// A Mutex must not be copied after first use.
type Mutex struct {
	once sync.Once
	ch   chan struct{} // holds a token while locked
}

func (m *Mutex) init() { m.once.Do(func() { m.ch = make(chan struct{}, 1) }) }

// Lock locks m, waiting until it is free or ctx is done; then it returns
// ctx.Err() and m is not locked. A ctx already done fails even when m is
// free, so a call with an expired deadline does nothing.
func (m *Mutex) Lock(ctx context.Context) error {
	m.init()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case m.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unlock unlocks m. Unlocking an unlocked mutex is a broken invariant
// and panics, as sync.Mutex's does.
func (m *Mutex) Unlock() {
	m.init()
	select {
	case <-m.ch:
	default:
		panic("ctxsync: unlock of unlocked mutex")
	}
}
