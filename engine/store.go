package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/mnemodb/mnemo"
)

// Store returns db as a mnemo.Store, for code written against any backend
// (the memory adapters, the framework integrations). The caller keeps
// owning db: the Store's Close does nothing, and db must stay open while
// the Store is used. Safe for concurrent use by multiple goroutines, as
// db is. The Store is also a mnemo.Locker (see TryLock). A nil db gives a
// nil Store.
func (db *DB) Store() mnemo.Store {
	if db == nil {
		return nil
	}
	return store{db: db}
}

// OpenStore opens (or creates) the database in dir with opts, as Open
// does, and returns it as a mnemo.Store that owns it: the Store's Close
// closes the database.
func OpenStore(dir string, opts *Options) (mnemo.Store, error) {
	db, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return store{db: db, owned: true}, nil
}

// DBOf returns the engine database behind s, when s is one (made by
// DB.Store or OpenStore, or wrapped in a mnemo.Unwrapper), for what only
// the engine offers: checkpoints, backups, stats.
func DBOf(s mnemo.Store) (*DB, bool) {
	for s != nil {
		if e, ok := s.(store); ok {
			return e.db, true
		}
		u, ok := s.(mnemo.Unwrapper)
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	return nil, false
}

// store is a DB as a mnemo.Store.
type store struct {
	db    *DB
	owned bool // Close closes db
}

func (s store) CreateCollection(ctx context.Context, name string, cfg mnemo.CollectionConfig) (mnemo.Collection, error) {
	c, err := s.db.CreateCollection(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	return storeCollection{c}, nil
}

func (s store) Collection(ctx context.Context, name string) (mnemo.Collection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := s.db.Collection(name)
	if err != nil {
		return nil, err
	}
	return storeCollection{c}, nil
}

func (s store) Collections(ctx context.Context) ([]string, error) {
	done, err := s.db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.db.Collections(), nil
}

func (s store) DropCollection(ctx context.Context, name string) error {
	return s.db.DropCollection(ctx, name)
}

func (s store) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// TryLock takes name on the database. Another process cannot open the
// database while this one has it (Open's file lock), so locks kept in the
// DB cover every handle that can reach it. A closed database takes none
// (mnemo.ErrClosed), and its locks are lost with it.
func (s store) TryLock(ctx context.Context, name string) (mnemo.Lock, error) {
	done, err := s.db.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := mnemo.CheckLockName(name); err != nil {
		return nil, err
	}
	return s.db.locks.take(s.db, name)
}

// storeCollection adds the context, and the errors of a closed database
// or a dropped collection, to Count; every other method is the
// Collection's own.
type storeCollection struct{ *Collection }

func (c storeCollection) Count(ctx context.Context) (int, error) {
	done, err := c.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return c.Collection.Count(), nil
}

// nameLocks are the named locks of a DB's Store (see store.TryLock).
type nameLocks struct {
	mu   sync.Mutex
	held map[string]bool // protected by mu
}

// take grants name in db's locks.
func (l *nameLocks) take(db *DB, name string) (mnemo.Lock, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] {
		return nil, fmt.Errorf("%w: %q is held by another handle in this process", mnemo.ErrLockHeld, name)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[name] = true
	return &nameLock{locks: l, db: db, name: name}, nil
}

// nameLock is a lock nameLocks granted.
type nameLock struct {
	once  sync.Once
	locks *nameLocks
	db    *DB // the database whose locks these are
	name  string
}

// Check reports nil while the database is open: an engine database is
// held by one process, and a lock in it is lost only by closing the
// database, which reopened holds no locks. After the close it reports
// mnemo.ErrLockLost (and the holder's writes fail with ErrClosed).
func (l *nameLock) Check(ctx context.Context) error {
	if l.db.closed.Load() {
		return fmt.Errorf("%w: %q (the database was closed)", mnemo.ErrLockLost, l.name)
	}
	return ctx.Err()
}

func (l *nameLock) Unlock() error {
	l.once.Do(func() {
		l.locks.mu.Lock()
		delete(l.locks.held, l.name)
		l.locks.mu.Unlock()
	})
	return nil
}

// ReplaceCollection implements mnemo.Replacer (see DB.ReplaceCollection).
func (s store) ReplaceCollection(ctx context.Context, name, with string, final func(ctx context.Context, old, new mnemo.Collection) error) error {
	var f func(context.Context, *Collection, *Collection) error
	if final != nil {
		f = func(ctx context.Context, old, new *Collection) error {
			return final(ctx, storeCollection{old}, storeCollection{new})
		}
	}
	return s.db.ReplaceCollection(ctx, name, with, f)
}
