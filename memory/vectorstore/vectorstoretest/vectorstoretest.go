// Package vectorstoretest runs the tests of code written against
// mnemo.Store (package vectorstore, the framework integrations) on every
// backend: the embedded engine always, and PostgreSQL with pgvector on the
// server MNEMO_PG_DSN names, each test in a schema of its own. Without
// MNEMO_PG_DSN the PostgreSQL runs skip, and under CI=true they fail (see
// pgtest.DSN):
//
//	go test ./...
//	MNEMO_PG_DSN=postgres://user@host:5432/db go test ./...
package vectorstoretest

import (
	"context"
	"errors"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// Run runs body once on each backend, as the subtests "engine" (an
// in-memory database) and "postgres" (a new schema on the test server),
// each given an empty Store of its own that is closed when the subtest
// ends.
func Run(t *testing.T, body func(t *testing.T, db mnemo.Store)) {
	t.Helper()
	t.Run("engine", func(t *testing.T) {
		s, err := engine.OpenStore("", &engine.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		body(t, s)
	})
	t.Run("postgres", func(t *testing.T) { body(t, pgtest.Open(t)) })
}

// RunReopen runs body as Run does, for a test that reopens its data (to
// check what survives a restart): each call of open returns a new Store
// on the subtest's data, closed when the subtest ends if the test has not
// closed it. On the engine the data is a database in a temporary
// directory, which one Store at a time may have open: close one before
// opening the next. On PostgreSQL it is the subtest's schema.
func RunReopen(t *testing.T, body func(t *testing.T, open func() mnemo.Store)) {
	t.Helper()
	t.Run("engine", func(t *testing.T) {
		dir := t.TempDir()
		body(t, func() mnemo.Store {
			t.Helper()
			s, err := engine.OpenStore(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.NewDSN(t)
		body(t, func() mnemo.Store { return memtest.OpenPG(t, dsn) })
	})
}

// Count returns the number of records in the collection name of db, 0
// when there is none; it fails t on another error.
func Count(t testing.TB, db mnemo.Store, name string) int {
	t.Helper()
	ctx := context.Background()
	c, err := db.Collection(ctx, name)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Zero is an embedder that maps every text to the zero vector of
// dimension 8, as an embedder does with text it finds nothing in: for
// testing that such text is refused. Zero is safe for concurrent use by
// multiple goroutines.
type Zero struct{}

// Embed returns a zero vector per text.
func (Zero) Embed(_ context.Context, texts []string) ([][]float32, error) {
	vs := make([][]float32, len(texts))
	for i := range vs {
		vs[i] = make([]float32, 8)
	}
	return vs, nil
}

// Dimension returns 8.
func (Zero) Dimension() int { return 8 }

// Identity returns "test/zero/8".
func (Zero) Identity() string { return "test/zero/8" }
