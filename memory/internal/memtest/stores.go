package memtest

import (
	"context"
	"os"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/postgres"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// Store opens a store on the backend the tests run on (an in-memory
// engine database, or a new schema of the test server under
// MNEMO_MEMORY_BACKEND=postgres), closed when t ends.
func Store(t testing.TB) mnemo.Store {
	t.Helper()
	s, err := textvec.InMemoryStore(textvec.Observe{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TwoStores returns two Stores on the same data, closed when t ends: on
// the engine two Stores (db.Store()) of one in-memory database; under
// MNEMO_MEMORY_BACKEND=postgres two Stores of one new schema.
func TwoStores(t testing.TB) (mnemo.Store, mnemo.Store) {
	t.Helper()
	if os.Getenv("MNEMO_MEMORY_BACKEND") != "postgres" {
		db, err := engine.Open("", &engine.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.Store(), db.Store()
	}
	dsn := pgtest.NewDSN(t)
	return OpenPG(t, dsn), OpenPG(t, dsn)
}

// OpenPG opens a PostgreSQL Store on dsn, closed when t ends.
func OpenPG(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
