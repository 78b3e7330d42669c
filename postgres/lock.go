package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mnemodb/mnemo"
)

// Locks.
//
// TryLock takes a session-level advisory lock, keyed by a 64-bit hash of
// the schema and the name (hashtextextended, computed by the server), on
// one connection the Store keeps for its locks: not one of the pool's,
// which the pool may close or recycle and which Close would wait for.
// Every lock a Store holds lives on that connection, so a Store costs the
// server one connection for its locks however many it holds. The server
// reentrantly grants a session a lock it already holds, so the Store also
// keeps the names it holds and refuses a second TryLock of one.
//
// When the server ends that connection (a restart, an idle timeout, an
// administrator's pg_terminate_backend), every lock on it is gone, and
// another Store may take them. Lock.Check tells: it asks the server on
// the lock connection, and fails with mnemo.ErrLockLost once the
// connection the lock was taken on is gone, even after the Store has
// connected again for new locks.

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

// lockReleaseTimeout bounds Unlock's round trip to the server.
const lockReleaseTimeout = 5 * time.Second

// lockConn is a Store's connection for its locks.
type lockConn struct {
	mu   sync.Mutex // guards the fields, and serialises use of conn
	conn *pgx.Conn  // nil until the first TryLock, and after it failed
	gen  int        // counts connections: a lock taken on an older one is lost
	held map[string]bool
}

// TryLock takes the lock called name for this Store, without waiting: a
// server-side advisory lock, so every Store on the same database and
// schema, in this process or any other, sees it. While another Store
// holds it, or this one does, TryLock fails with an error wrapping
// mnemo.ErrLockHeld that names the holder's server process. A name that
// is not UTF-8 or holds U+0000 is mnemo.ErrInvalidConfig. The lock holds
// until Unlock, Close, or the end of the Store's lock connection (see
// Lock.Check).
func (s *Store) TryLock(ctx context.Context, name string) (mnemo.Lock, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := mnemo.CheckLockName(name); err != nil {
		return nil, err
	}
	lc := &s.locks
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.held[name] {
		return nil, fmt.Errorf("%w: %q is held by another handle on this Store", mnemo.ErrLockHeld, name)
	}
	var key int64
	err := s.do(ctx, func(ctx context.Context) error {
		if lc.conn == nil || lc.conn.IsClosed() {
			if lc.conn != nil {
				lc.conn.Close(context.Background())
			}
			lc.conn = nil
			conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
			if err != nil {
				return err
			}
			lc.conn, lc.gen, lc.held = conn, lc.gen+1, map[string]bool{}
		}
		var ok bool
		err := lc.conn.QueryRow(ctx, lockKeySQL, name).Scan(&key)
		if err == nil {
			err = lc.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok)
		}
		if err == nil && !ok {
			return holderError(ctx, lc.conn, name, key)
		}
		if err != nil && lc.conn.IsClosed() {
			lc.conn = nil // connect again on the retry
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.closed.Load() { // closed meanwhile: Close may not have seen this lock
		lc.conn.Close(context.Background())
		lc.conn = nil
		return nil, mnemo.ErrClosed
	}
	lc.held[name] = true
	return &lock{s: s, name: name, key: key, gen: lc.gen}, nil
}

// holderError is the mnemo.ErrLockHeld of a lock another session holds.
func holderError(ctx context.Context, conn *pgx.Conn, name string, key int64) error {
	var pid int
	var app, addr string
	if err := conn.QueryRow(ctx, holderSQL, key).Scan(&pid, &app, &addr); err != nil {
		// Released between the two statements, or not visible to this
		// role: still locked as far as this attempt knows.
		return fmt.Errorf("%w: %q", mnemo.ErrLockHeld, name)
	}
	if app != "" {
		app = ", application " + app
	}
	return fmt.Errorf("%w: %q is held by server process %d (client %s%s)", mnemo.ErrLockHeld, name, pid, addr, app)
}

// lock is an advisory lock held on the Store's lock connection number gen.
type lock struct {
	s    *Store
	name string
	key  int64
	gen  int
	done bool // guarded by s.locks.mu
}

// current reports whether the lock is still on the live lock connection.
// The caller holds s.locks.mu.
func (l *lock) current() bool {
	lc := &l.s.locks
	return !l.done && lc.conn != nil && !lc.conn.IsClosed() && lc.gen == l.gen
}

// Check reports whether the lock is still held: nil when the server
// answers on the connection it was taken on, mnemo.ErrLockLost when
// that connection has ended (and the server released the lock with it),
// or the error of a server that did not answer.
func (l *lock) Check(ctx context.Context) error {
	lc := &l.s.locks
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if !l.current() {
		return fmt.Errorf("%w: %q (its connection to the server ended)", mnemo.ErrLockLost, l.name)
	}
	if _, err := lc.conn.Exec(ctx, `SELECT 1`); err != nil {
		if lc.conn.IsClosed() {
			return fmt.Errorf("%w: %q (its connection to the server ended: %v)", mnemo.ErrLockLost, l.name, err)
		}
		return fmt.Errorf("postgres: check lock %q: %w", l.name, err)
	}
	return nil
}

// Unlock releases the lock on the server before it returns, so that
// another Store may take it at once.
func (l *lock) Unlock() error {
	lc := &l.s.locks
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if l.done {
		return nil
	}
	l.done = true
	if lc.gen != l.gen || lc.conn == nil {
		return nil // lost with its connection: nothing to release
	}
	delete(lc.held, l.name)
	ctx, cancel := context.WithTimeout(context.Background(), lockReleaseTimeout)
	defer cancel()
	if _, err := lc.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.key); err != nil {
		// The session's lock cannot be told apart from a stuck one:
		// end the session, which releases every lock on it (the others
		// find out through Check).
		lc.conn.Close(context.Background())
		lc.conn = nil
		return fmt.Errorf("postgres: unlock %q: %w", l.name, err)
	}
	return nil
}

// releaseLocks ends the lock connection, releasing every lock on it. The
// caller is Close, after the pool drained: no write under a lock is in
// flight any more.
func (s *Store) releaseLocks() {
	lc := &s.locks
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.conn != nil {
		// Release on the server before the connection goes: the server
		// ends a closed session's locks only when its backend exits.
		ctx, cancel := context.WithTimeout(context.Background(), lockReleaseTimeout)
		lc.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		cancel()
		lc.conn.Close(context.Background())
		lc.conn = nil
	}
	lc.gen++
}

var _ mnemo.Locker = (*Store)(nil)
