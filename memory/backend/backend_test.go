package backend_test

import (
	"testing"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/backend"
	"github.com/mnemodb/mnemo/memory/backend/backendtest"
)

func TestEmbedded(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Store {
		db, err := engine.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return backend.Embedded(db)
	})
}

func TestEmbeddedShared(t *testing.T) {
	backendtest.RunShared(t, func(t *testing.T) (backend.Store, backend.Store) {
		db, err := engine.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return backend.Embedded(db), backend.Embedded(db)
	})
}
