package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/mnemotest"
	"github.com/mnemodb/mnemo/postgres"
)

// serverDSN returns the test server's DSN from MNEMO_PG_DSN. Without one
// the test is skipped, or fails under CI=true, where the gate starts a
// server.
func serverDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("MNEMO_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_DSN is not set under CI=true: the gate must start a PostgreSQL server")
		}
		t.Skip("MNEMO_PG_DSN is not set (a PostgreSQL server with pgvector; see .ci/run)")
	}
	return dsn
}

var schemas atomic.Int64

// freshDSN returns a DSN whose tables live in a new, empty schema that is
// dropped when the test ends.
func freshDSN(t testing.TB) string {
	t.Helper()
	dsn := serverDSN(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("mnemo_test_%d_%d", os.Getpid(), schemas.Add(1))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, dsn, schema)
}

func withSearchPath(t testing.TB, dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("MNEMO_PG_DSN must be a postgres:// URL for the tests: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// createSchema opens a Store on dsn, which creates mnemo's schema there,
// and closes it.
func createSchema(t testing.TB, dsn string) {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// openCollection opens a Store on dsn, closed with the test, and creates
// the collection name in it.
func openCollection(t testing.TB, dsn, name string, cfg mnemo.CollectionConfig) (*postgres.Store, mnemo.Collection) {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := s.CreateCollection(context.Background(), name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// setupSchema prepares dsn's schema for a test of Open: with setup nil
// it leaves it empty, otherwise it creates mnemo's schema there and runs
// the setup statements. It returns a plain connection to dsn, closed with
// the test.
func setupSchema(t testing.TB, dsn string, setup []string) *pgx.Conn {
	t.Helper()
	if setup != nil {
		createSchema(t, dsn)
	}
	conn := connect(t, dsn)
	for _, stmt := range setup {
		if _, err := conn.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return conn
}

// connect returns a plain connection to dsn, closed with the test.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func openFresh(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), freshDSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	serverDSN(t)
	mnemotest.Run(t, func(t *testing.T) mnemo.Store { return openFresh(t) })
}

func TestConformanceShared(t *testing.T) {
	serverDSN(t)
	mnemotest.RunShared(t, func(t *testing.T) (mnemo.Store, mnemo.Store) {
		dsn := freshDSN(t)
		a, err := postgres.Open(context.Background(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := postgres.Open(context.Background(), dsn, nil)
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		return a, b
	})
}

// TestLockReleasedOnClose: a Store's Close releases its locks, and so
// does the end of the lock's connection.
func TestLockReleasedOnClose(t *testing.T) {
	serverDSN(t)
	ctx := context.Background()
	dsn := freshDSN(t)
	a, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := a.TryLock(ctx, "session"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryLock(ctx, "session"); !errors.Is(err, mnemo.ErrLockHeld) || !strings.Contains(err.Error(), "server process") {
		t.Fatalf("TryLock of a held lock: %v, want ErrLockHeld naming the holder", err)
	}
	a.Close()
	var l mnemo.Lock
	for try := 0; try < 100; try++ { // the server drops the locks once it sees the connection close
		if l, err = b.TryLock(ctx, "session"); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("TryLock after the holder's Close: %v", err)
	}
	l.Unlock()
	if _, err := a.TryLock(ctx, "other"); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("TryLock on a closed Store: %v, want ErrClosed", err)
	}
}
