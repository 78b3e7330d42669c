package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/backend"
)

// Locks.
//
// TryLock takes a session-level advisory lock, keyed by a 64-bit hash of
// the schema and the name (hashtextextended, computed by the server), on
// a connection of its own: not one of the pool's, which the pool may
// close or recycle, and which Close would otherwise wait for. The
// connection lives as long as the lock. When the server ends it (a
// restart, a killed backend), the lock is gone with it and another
// handle may take it.

// lockKeySQL is the advisory lock key of a name in the current schema.
const lockKeySQL = `SELECT hashtextextended(current_schema() || '/mnemo-lock/' || $1, 0)`

// holderSQL names the server process that holds advisory lock $1 (a
// bigint key is stored as classid = high 32 bits, objid = low 32 bits,
// objsubid = 1).
const holderSQL = `SELECT l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), 'local')
	FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
	AND l.classid = (($1::bigint >> 32) & 4294967295)::oid AND l.objid = ($1::bigint & 4294967295)::oid
	AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	LIMIT 1`

// TryLock takes the lock called name for this Store, without waiting: a
// server-side advisory lock, so every Store on the same database and
// schema, in this process or any other, sees it. While another handle
// holds it, TryLock fails with an error wrapping backend.ErrLocked that
// names the holder's server process. The lock holds a connection of its
// own until Unlock or the Store's Close.
func (s *Store) TryLock(ctx context.Context, name string) (backend.Lock, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	var l *lock
	err := s.do(ctx, func(ctx context.Context) error {
		conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
		if err != nil {
			return err
		}
		var key int64
		var ok bool
		err = conn.QueryRow(ctx, lockKeySQL, name).Scan(&key)
		if err == nil {
			err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok)
		}
		if err == nil && !ok {
			err = holderError(ctx, conn, name, key)
		}
		if err != nil {
			conn.Close(context.Background())
			return err
		}
		l = &lock{s: s, conn: conn, key: key}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.locks.Lock()
	defer s.locks.Unlock()
	if s.closed.Load() { // closed meanwhile: Close did not see this lock
		l.conn.Close(context.Background())
		return nil, engine.ErrClosed
	}
	if s.locks.held == nil {
		s.locks.held = map[*lock]bool{}
	}
	s.locks.held[l] = true
	return l, nil
}

// holderError is the ErrLocked of a lock another session holds.
func holderError(ctx context.Context, conn *pgx.Conn, name string, key int64) error {
	var pid int
	var app, addr string
	if err := conn.QueryRow(ctx, holderSQL, key).Scan(&pid, &app, &addr); err != nil {
		// Released between the two statements, or not visible to this
		// role: still locked as far as this attempt knows.
		return fmt.Errorf("%w: %q", backend.ErrLocked, name)
	}
	if app != "" {
		app = ", application " + app
	}
	return fmt.Errorf("%w: %q is held by server process %d (client %s%s)", backend.ErrLocked, name, pid, addr, app)
}

// lock is an advisory lock held on its own connection.
type lock struct {
	s    *Store
	once sync.Once
	conn *pgx.Conn
	key  int64
}

// Unlock releases the lock by closing its connection (the server drops a
// session's advisory locks with it).
func (l *lock) Unlock() error {
	var err error
	l.once.Do(func() {
		l.s.locks.Lock()
		delete(l.s.locks.held, l)
		l.s.locks.Unlock()
		err = l.conn.Close(context.Background())
	})
	return err
}

// releaseLocks releases every lock the Store holds. The caller is Close.
func (s *Store) releaseLocks() {
	s.locks.Lock()
	held := make([]*lock, 0, len(s.locks.held))
	for l := range s.locks.held {
		held = append(held, l)
	}
	s.locks.Unlock()
	for _, l := range held {
		l.Unlock()
	}
}

var _ backend.Locker = (*Store)(nil)
