package engine_test

import (
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/mnemotest"
)

func TestStoreConformance(t *testing.T) {
	mnemotest.Run(t, func(t *testing.T) mnemo.Store {
		db, err := engine.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.Store()
	})
}

func TestStoreShared(t *testing.T) {
	mnemotest.RunShared(t, func(t *testing.T) (mnemo.Store, mnemo.Store) {
		db, err := engine.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db.Store(), db.Store()
	})
}
