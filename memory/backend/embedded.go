package backend

import (
	"context"

	"github.com/mnemodb/mnemo/engine"
)

// Embedded returns db as a Store. The caller keeps owning db: the Store's
// Close does nothing, and db must stay open while the Store is used.
// Safe for concurrent use by multiple goroutines, as db is. A nil db
// gives a nil Store.
func Embedded(db *engine.DB) Store {
	if db == nil {
		return nil
	}
	return embedded{db: db}
}

// OpenEmbedded opens (or creates) the engine database in dir with opts, as
// engine.Open does, and returns it as a Store that owns it: the Store's
// Close closes the database.
func OpenEmbedded(dir string, opts *engine.Options) (Store, error) {
	db, err := engine.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return embedded{db: db, owned: true}, nil
}

// EngineDB returns the engine database behind s, when s is an embedded
// Store, for what only the engine offers (checkpoints, backups, stats).
func EngineDB(s Store) (*engine.DB, bool) {
	e, ok := s.(embedded)
	return e.db, ok
}

type embedded struct {
	db    *engine.DB
	owned bool
}

func (e embedded) CreateCollection(ctx context.Context, name string, cfg engine.CollectionConfig) (Collection, error) {
	c, err := e.db.CreateCollection(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	return embeddedCollection{c}, nil
}

func (e embedded) Collection(ctx context.Context, name string) (Collection, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := e.db.Collection(name)
	if err != nil {
		return nil, err
	}
	return embeddedCollection{c}, nil
}

func (e embedded) Collections(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.db.Collections(), nil
}

func (e embedded) DropCollection(ctx context.Context, name string) error {
	return e.db.DropCollection(ctx, name)
}

func (e embedded) Close() error {
	if e.owned {
		return e.db.Close()
	}
	return nil
}

// embeddedCollection adds the context to the engine's Count; every other
// method is the engine's own.
type embeddedCollection struct{ *engine.Collection }

func (c embeddedCollection) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return c.Collection.Count(), nil
}
