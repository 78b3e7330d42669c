// Package pgtest gives tests a PostgreSQL store of their own on the test
// server that MNEMO_PG_DSN names (a server with pgvector, such as the one
// the project's CI starts): each store's tables live in a new schema,
// dropped afterwards. Without MNEMO_PG_DSN a test skips, and fails under
// CI=true, where a server must be there.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo/postgres"
)

// DSN returns MNEMO_PG_DSN, or skips t (fails it under CI=true) when it
// is not set.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("MNEMO_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_DSN is not set under CI=true: a PostgreSQL server with pgvector must be running")
		}
		t.Skip("MNEMO_PG_DSN is not set (a PostgreSQL server with pgvector)")
	}
	return dsn
}

var seq atomic.Int64

// Schemas makes and drops test schemas on one server. It is safe for
// concurrent use by multiple goroutines.
type Schemas struct {
	dsn  string
	mu   sync.Mutex
	made []string
}

// NewSchemas returns Schemas on the server dsn names.
func NewSchemas(dsn string) *Schemas { return &Schemas{dsn: dsn} }

// Open makes a new schema and opens a Store whose tables live in it.
func (s *Schemas) Open(ctx context.Context) (*postgres.Store, error) {
	dsn, err := s.New(ctx)
	if err != nil {
		return nil, err
	}
	return postgres.Open(ctx, dsn, nil)
}

// New makes a new schema and returns the DSN of a Store whose tables live
// in it, for a test that opens several Stores (or processes) on it.
func (s *Schemas) New(ctx context.Context) (string, error) {
	name := fmt.Sprintf("mnemo_test_%d_%d", os.Getpid(), seq.Add(1))
	u, err := url.Parse(s.dsn)
	if err != nil {
		return "", fmt.Errorf("MNEMO_PG_DSN must be a postgres:// URL: %v", err)
	}
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.made = append(s.made, name)
	s.mu.Unlock()
	q := u.Query()
	q.Set("search_path", name+",public")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// NewDSN returns the DSN of a new schema, dropped when t ends.
func NewDSN(t testing.TB) string {
	t.Helper()
	ss := NewSchemas(DSN(t))
	dsn, err := ss.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ss.Drop(context.Background()); err != nil {
			t.Logf("drop test schema: %v", err)
		}
	})
	return dsn
}

// Drop drops every schema Open made.
func (s *Schemas) Drop(ctx context.Context) error {
	s.mu.Lock()
	made := s.made
	s.made = nil
	s.mu.Unlock()
	if len(made) == 0 {
		return nil
	}
	conn, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, name := range made {
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			return err
		}
	}
	return nil
}

// Open returns a Store in a new schema, closed and dropped when t ends.
func Open(t testing.TB) *postgres.Store {
	t.Helper()
	ss := NewSchemas(DSN(t))
	s, err := ss.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if err := ss.Drop(context.Background()); err != nil {
			t.Logf("drop test schema: %v", err)
		}
	})
	return s
}
