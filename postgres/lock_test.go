package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mnemodb/mnemo"
)

// schemaDSN makes a schema on the test server (MNEMO_PG_DSN; the test
// skips without it, and fails under CI=true) and returns a DSN whose
// Stores live in it, dropped when t ends. (Package pgtest does this for
// the tests outside the package.)
func schemaDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("MNEMO_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_DSN is not set under CI=true")
		}
		t.Skip("MNEMO_PG_DSN is not set (a PostgreSQL server with pgvector)")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("mnemo_locktest_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// openPair opens two Stores on one fresh schema of the test server.
func openPair(t *testing.T) (*Store, *Store) {
	t.Helper()
	dsn := schemaDSN(t)
	a, err := Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err := Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b
}

// TestLockLost: when the server ends the connection that holds a lock,
// Check says so (ErrLockLost), another Store can take the lock, and the
// first Store's new locks work on a new connection while the old lock
// stays lost.
func TestLockLost(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t)
	l, err := a.TryLock(ctx, "session")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Check(ctx); err != nil {
		t.Fatalf("Check of a held lock: %v", err)
	}
	var pid int
	if err := a.locks.conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(ctx); !errors.Is(err, mnemo.ErrLockLost) {
		t.Fatalf("Check after the server ended the lock's connection: %v, want ErrLockLost", err)
	}
	// pg_terminate_backend only signals: the backend releases its locks
	// as it exits, a moment later on a loaded machine.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var alive bool
		if err := b.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d still alive 10 s after pg_terminate_backend", pid)
		}
	}
	lb, err := b.TryLock(ctx, "session")
	if err != nil {
		t.Fatalf("another Store after the holder's connection ended: %v", err)
	}
	if _, err := a.TryLock(ctx, "other"); err != nil {
		t.Fatalf("a new lock on the first Store: %v", err)
	}
	if err := l.Check(ctx); !errors.Is(err, mnemo.ErrLockLost) {
		t.Fatalf("the lost lock after the Store connected again: %v, want ErrLockLost", err)
	}
	lb.Unlock()
	l.Unlock() // nothing to release
}

// TestLockReleasedAtOnce: Unlock releases the lock on the server before
// it returns, and a Store's second TryLock of a name it holds is refused.
func TestLockReleasedAtOnce(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t)
	for i := range 20 {
		l, err := a.TryLock(ctx, "s")
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := a.TryLock(ctx, "s"); !errors.Is(err, mnemo.ErrLockHeld) {
			t.Fatalf("the same Store again: %v, want ErrLockHeld", err)
		}
		if err := l.Unlock(); err != nil {
			t.Fatal(err)
		}
		lb, err := b.TryLock(ctx, "s") // no retry: released already
		if err != nil {
			t.Fatalf("round %d, right after Unlock: %v", i, err)
		}
		lb.Unlock()
	}
}

// TestManyLocksOneConnection: a Store holds any number of locks on one
// connection of the server's. The Store's sessions are told apart by an
// application name of their own: other packages' tests share the server.
func TestManyLocksOneConnection(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(schemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("mnemo-manylocks-%d", time.Now().UnixNano())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	a, err := Open(ctx, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sessions := func() int {
		t.Helper()
		var n int
		if err := a.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := sessions()
	var locks []mnemo.Lock
	for i := range 300 {
		l, err := a.TryLock(ctx, fmt.Sprint("session-", i))
		if err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
		locks = append(locks, l)
	}
	if after := sessions(); after-before > 1 {
		t.Fatalf("300 locks took %d more server connections, want at most 1", after-before)
	}
	for _, l := range locks {
		l.Unlock()
	}
}

// TestCloseKeepsLocksUntilDrained: Close releases the Store's locks only
// after the calls in flight have finished, so no other Store can take a
// lock while a write under it may still land.
func TestCloseKeepsLocksUntilDrained(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t)
	if _, err := a.TryLock(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		conn, err := a.pool.Acquire(ctx) // a write in flight
		if err != nil {
			t.Error(err)
			close(started)
			return
		}
		close(started)
		conn.Exec(ctx, `SELECT pg_sleep(0.5)`)
		if _, err := b.TryLock(ctx, "s"); !errors.Is(err, mnemo.ErrLockHeld) {
			t.Errorf("TryLock while the holder's last call is in flight: %v, want ErrLockHeld", err)
		}
		conn.Release()
	})
	<-started
	time.Sleep(50 * time.Millisecond) // Close starts while the call runs
	a.Close()
	wg.Wait()
	if l, err := b.TryLock(ctx, "s"); err != nil {
		t.Fatalf("TryLock after Close returned: %v", err)
	} else {
		l.Unlock()
	}
}
