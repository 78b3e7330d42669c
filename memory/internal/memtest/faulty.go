package memtest

import (
	"context"

	"github.com/mnemodb/mnemo"
)

// Faulty is a mnemo.Store that passes every call to Store, after asking
// Hook: a non-nil error from Hook fails the call with it and nothing
// reaches Store. Hook sees the operation ("upsert", "delete", "get",
// "scan", "count", "query", and "reserve" and "advance" of a collection
// that is a mnemo.Sequencer, which its wrapper is too) and the
// collection's name; it may also block, to stand for a server that froze.
// A nil Hook passes everything.
type Faulty struct {
	mnemo.Store
	Hook func(ctx context.Context, op, collection string) error
	// NoSequencer hides the collections' mnemo.Sequencer, as a backend
	// whose collections keep no sequence of positions would.
	NoSequencer bool
}

func (f *Faulty) hook(ctx context.Context, op, name string) error {
	if f.Hook == nil {
		return nil
	}
	return f.Hook(ctx, op, name)
}

// TryLock passes the lock to Store (see mnemo.TryLock).
func (f *Faulty) TryLock(ctx context.Context, name string) (mnemo.Lock, error) {
	return mnemo.TryLock(ctx, f.Store, name)
}

// CreateCollection wraps the collection Store returns.
func (f *Faulty) CreateCollection(ctx context.Context, name string, cfg mnemo.CollectionConfig) (mnemo.Collection, error) {
	c, err := f.Store.CreateCollection(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	return f.wrap(c), nil
}

// Collection wraps the collection Store returns.
func (f *Faulty) Collection(ctx context.Context, name string) (mnemo.Collection, error) {
	c, err := f.Store.Collection(ctx, name)
	if err != nil {
		return nil, err
	}
	return f.wrap(c), nil
}

// wrap returns c with every call through Hook; a wrapped mnemo.Sequencer
// is one, unless NoSequencer.
func (f *Faulty) wrap(c mnemo.Collection) mnemo.Collection {
	fc := faultyCollection{c, f}
	if s, ok := c.(mnemo.Sequencer); ok && !f.NoSequencer {
		return faultySequencer{fc, s}
	}
	return fc
}

type faultyCollection struct {
	mnemo.Collection
	f *Faulty
}

func (c faultyCollection) Upsert(ctx context.Context, records ...mnemo.Record) ([]string, error) {
	if err := c.f.hook(ctx, "upsert", c.Name()); err != nil {
		return nil, err
	}
	return c.Collection.Upsert(ctx, records...)
}

func (c faultyCollection) Delete(ctx context.Context, ids ...string) (int, error) {
	if err := c.f.hook(ctx, "delete", c.Name()); err != nil {
		return 0, err
	}
	return c.Collection.Delete(ctx, ids...)
}

func (c faultyCollection) Get(ctx context.Context, id string) (mnemo.Record, bool, error) {
	if err := c.f.hook(ctx, "get", c.Name()); err != nil {
		return mnemo.Record{}, false, err
	}
	return c.Collection.Get(ctx, id)
}

func (c faultyCollection) Scan(ctx context.Context, after string, limit int) ([]mnemo.Record, string, error) {
	if err := c.f.hook(ctx, "scan", c.Name()); err != nil {
		return nil, "", err
	}
	return c.Collection.Scan(ctx, after, limit)
}

func (c faultyCollection) Count(ctx context.Context) (int, error) {
	if err := c.f.hook(ctx, "count", c.Name()); err != nil {
		return 0, err
	}
	return c.Collection.Count(ctx)
}

func (c faultyCollection) Query(ctx context.Context, q mnemo.Query) ([]mnemo.Hit, error) {
	if err := c.f.hook(ctx, "query", c.Name()); err != nil {
		return nil, err
	}
	return c.Collection.Query(ctx, q)
}

type faultySequencer struct {
	faultyCollection
	seq mnemo.Sequencer
}

func (c faultySequencer) Reserve(ctx context.Context, n int) (int64, error) {
	if err := c.f.hook(ctx, "reserve", c.Name()); err != nil {
		return 0, err
	}
	return c.seq.Reserve(ctx, n)
}

func (c faultySequencer) Advance(ctx context.Context, next int64) error {
	if err := c.f.hook(ctx, "advance", c.Name()); err != nil {
		return err
	}
	return c.seq.Advance(ctx, next)
}
