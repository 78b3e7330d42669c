package engine_test

import (
	"context"
	"errors"
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

// wrapped is a Store that wraps another, as a tracing wrapper would.
type wrapped struct{ mnemo.Store }

func (w wrapped) Unwrap() mnemo.Store { return w.Store }

// TestStoreClosed checks that every method of a Store, and of a
// collection it opened, fails with mnemo.ErrClosed once the database is
// closed, as the PostgreSQL Store's do: through db.Store() after
// db.Close(), and through OpenStore's Store after its Close. A lock taken
// before the close is lost with the database.
func TestStoreClosed(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(t *testing.T, dir string) (mnemo.Store, func() error)
	}{
		{"DB.Store", func(t *testing.T, dir string) (mnemo.Store, func() error) {
			db, err := engine.Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			return db.Store(), db.Close
		}},
		{"OpenStore", func(t *testing.T, dir string) (mnemo.Store, func() error) {
			s, err := engine.OpenStore(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s, s.Close
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, closeDB := tc.open(t, dir)
			c, err := s.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "hello"}); err != nil {
				t.Fatal(err)
			}
			lock, err := mnemo.TryLock(ctx, wrapped{s}, "held")
			if err != nil {
				t.Fatal(err)
			}
			if err := closeDB(); err != nil {
				t.Fatal(err)
			}
			closed := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, mnemo.ErrClosed) {
					t.Errorf("%s after Close: %v, want ErrClosed", what, err)
				}
			}
			_, err = s.Collections(ctx)
			closed("Collections", err)
			_, err = s.Collection(ctx, "c")
			closed("Collection", err)
			_, err = s.CreateCollection(ctx, "d", mnemo.CollectionConfig{Dimension: 2})
			closed("CreateCollection", err)
			closed("DropCollection", s.DropCollection(ctx, "c"))
			_, err = mnemo.TryLock(ctx, s, "other")
			closed("TryLock", err)
			_, err = mnemo.TryLock(ctx, wrapped{s}, "other")
			closed("TryLock through a wrapper", err)
			_, err = c.Count(ctx)
			closed("Count", err)
			_, err = c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 1}})
			closed("Upsert", err)
			_, err = c.Delete(ctx, "a")
			closed("Delete", err)
			_, _, err = c.Get(ctx, "a")
			closed("Get", err)
			_, _, err = c.Scan(ctx, "", 10)
			closed("Scan", err)
			_, err = c.Query(ctx, mnemo.Query{Text: "hello"})
			closed("Query", err)
			if err := lock.Check(ctx); !errors.Is(err, mnemo.ErrLockLost) {
				t.Errorf("Check of a lock of a closed database: %v, want ErrLockLost", err)
			}
			if err := lock.Unlock(); err != nil {
				t.Errorf("Unlock of a lock of a closed database: %v", err)
			}
			// Reopened, the database holds no lock: the name is free.
			s, closeDB = tc.open(t, dir)
			defer closeDB()
			again, err := mnemo.TryLock(ctx, s, "held")
			if err != nil {
				t.Fatalf("TryLock after reopening: %v", err)
			}
			again.Unlock()
		})
	}
}

// TestStoreCountDropped checks that Count through a Store fails with
// mnemo.ErrCollectionNotFound once the collection is dropped, as every
// other method of the collection does (and as on PostgreSQL).
func TestStoreCountDropped(t *testing.T) {
	ctx := context.Background()
	s, err := engine.OpenStore("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DropCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Count(ctx); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Count of a dropped collection: %d, %v; want ErrCollectionNotFound", n, err)
	}
}
