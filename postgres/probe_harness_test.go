package postgres_test

import (
	"context"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/postgres"
)

// probePair is one collection in PostgreSQL and the same in the engine.
type probePair struct {
	pg, eng mnemo.Collection
	dsn     string
	store   *postgres.Store
}

func newProbePair(t *testing.T, name string, cfg mnemo.CollectionConfig) *probePair {
	t.Helper()
	ctx := context.Background()
	dsn := freshDSN(t)
	pg, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.Close() })
	db, err := engine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p := &probePair{dsn: dsn, store: pg}
	if p.pg, err = pg.CreateCollection(ctx, name, cfg); err != nil {
		t.Fatal(err)
	}
	if p.eng, err = db.Store().CreateCollection(ctx, name, cfg); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *probePair) upsert(t *testing.T, recs ...mnemo.Record) {
	t.Helper()
	for _, c := range []mnemo.Collection{p.pg, p.eng} {
		if _, err := c.Upsert(context.Background(), recs...); err != nil {
			t.Fatal(err)
		}
	}
}

func (p *probePair) del(t *testing.T, ids ...string) {
	t.Helper()
	for _, c := range []mnemo.Collection{p.pg, p.eng} {
		if _, err := c.Delete(context.Background(), ids...); err != nil {
			t.Fatal(err)
		}
	}
}

// compare asks both and reports whether they agree (errors via t).
func (p *probePair) compare(t *testing.T, what string, q mnemo.Query) bool {
	t.Helper()
	got, err := p.pg.Query(context.Background(), q)
	if err != nil {
		t.Errorf("%s: postgres: %v", what, err)
		return false
	}
	want, err := p.eng.Query(context.Background(), q)
	if err != nil {
		t.Errorf("%s: engine: %v", what, err)
		return false
	}
	// Near ties (scores within 1e-6) may be ordered apart: see hitsDiff.
	ok := true
	if d := hitsDiff(got, want); d != "" {
		ok = false
		t.Errorf("%s: %s\n postgres %v\n engine   %v", what, d, hitList(got), hitList(want))
	}
	return ok
}
