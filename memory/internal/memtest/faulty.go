package memtest

import (
	"context"

	"github.com/mnemodb/mnemo"
)

// Faulty is a mnemo.Store that passes every call to Store, after asking
// Hook: a non-nil error from Hook fails the call with it and nothing
// reaches Store. Hook sees the operation ("upsert", "delete", "get",
// "scan", "count", "query") and the collection's name; it may also block,
// to stand for a server that froze. A nil Hook passes everything.
type Faulty struct {
	mnemo.Store
	Hook func(ctx context.Context, op, collection string) error
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
	return faultyCollection{c, f}, nil
}

// Collection wraps the collection Store returns.
func (f *Faulty) Collection(ctx context.Context, name string) (mnemo.Collection, error) {
	c, err := f.Store.Collection(ctx, name)
	if err != nil {
		return nil, err
	}
	return faultyCollection{c, f}, nil
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
