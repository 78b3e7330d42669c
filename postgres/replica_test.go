package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// readOnlyDSN returns dsn with connections whose transactions are all
// read-only, as on a hot standby (pgx passes the parameter to the server).
func readOnlyDSN(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	ro := u.String()
	conn, err := pgx.Connect(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var on string
	if err := conn.QueryRow(context.Background(), `SHOW transaction_read_only`).Scan(&on); err != nil || on != "on" {
		t.Fatalf("transaction_read_only through %s: %q, %v; want on", ro, on, err)
	}
	return ro
}

// TestReadReplica: a Store opened on a read-only server whose schema the
// primary created reads as the primary does; its writes fail with
// ErrReadOnly and change nothing; its locks work.
func TestReadReplica(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	primary, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	pc, err := primary.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Upsert(ctx,
		mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "Paul works at Google"},
		mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "Anna lives in Oslo"},
	); err != nil {
		t.Fatal(err)
	}

	replica, err := postgres.Open(ctx, readOnlyDSN(t, dsn), nil)
	if err != nil {
		t.Fatalf("Open of a read-only server with a current schema: %v", err)
	}
	defer replica.Close()
	if names, err := replica.Collections(ctx); err != nil || !slices.Equal(names, []string{"notes"}) {
		t.Fatalf("Collections: %v, %v; want [notes]", names, err)
	}
	c, err := replica.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok, err := c.Get(ctx, "a"); err != nil || !ok || r.Content != "Paul works at Google" {
		t.Fatalf("Get: %+v, %v, %v", r, ok, err)
	}
	if recs, _, err := c.Scan(ctx, "", 10); err != nil || len(recs) != 2 {
		t.Fatalf("Scan: %d records, %v; want 2", len(recs), err)
	}
	if n, err := c.Count(ctx); err != nil || n != 2 {
		t.Fatalf("Count: %d, %v; want 2", n, err)
	}
	if hits, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 0.1}, Text: "where does Paul work", K: 1}); err != nil || len(hits) != 1 || hits[0].Record.ID != "a" {
		t.Fatalf("Query: %+v, %v; want a", hits, err)
	}

	writes := []struct {
		name string
		f    func() error
	}{
		{"Upsert", func() error {
			_, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{0, 1}, Content: "changed"})
			return err
		}},
		{"Delete", func() error { _, err := c.Delete(ctx, "a", "b"); return err }},
		{"CreateCollection", func() error {
			_, err := replica.CreateCollection(ctx, "other", mnemo.CollectionConfig{Dimension: 2})
			return err
		}},
		{"DropCollection", func() error { return replica.DropCollection(ctx, "notes") }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := w.f(); !errors.Is(err, postgres.ErrReadOnly) {
				t.Fatalf("%s on a read-only server: %v, want ErrReadOnly", w.name, err)
			}
		})
	}

	// Nothing changed, as the primary sees it.
	if names, err := primary.Collections(ctx); err != nil || !slices.Equal(names, []string{"notes"}) {
		t.Fatalf("Collections after the refused writes: %v, %v; want [notes]", names, err)
	}
	if n, err := pc.Count(ctx); err != nil || n != 2 {
		t.Fatalf("Count after the refused writes: %d, %v; want 2", n, err)
	}
	if r, ok, err := pc.Get(ctx, "a"); err != nil || !ok || r.Content != "Paul works at Google" {
		t.Fatalf("Get after the refused writes: %+v, %v, %v", r, ok, err)
	}

	// Advisory locks are not writes: a standby takes them (for itself).
	l, err := replica.TryLock(ctx, "session")
	if err != nil {
		t.Fatalf("TryLock on a read-only server: %v", err)
	}
	l.Unlock()
}

// TestReadOnlyOpen: Open of a read-only server reads the schema and
// changes nothing: a current schema opens, a missing one is ErrReadOnly
// naming the primary, a newer one ErrSchema as on the primary.
func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup []string // run after the primary created the schema; nil: an empty database
		want  error
		after string // mnemo_schema's rows after Open (see schemaRows)
	}{
		{"no schema", nil, postgres.ErrReadOnly, "absent"},
		{"current version", []string{}, nil, fmt.Sprint([]int{postgres.SchemaVersion})},
		{"newer version", []string{fmt.Sprintf(`UPDATE mnemo_schema SET version = %d`, postgres.SchemaVersion+1)}, postgres.ErrSchema, fmt.Sprint([]int{postgres.SchemaVersion + 1})},
		{"no version row", []string{`DELETE FROM mnemo_schema`}, postgres.ErrSchema, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := freshDSN(t)
			if tt.setup != nil {
				createSchema(t, dsn)
			}
			conn := connect(t, dsn)
			for _, stmt := range tt.setup {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			s, err := postgres.Open(ctx, readOnlyDSN(t, dsn), nil)
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("Open: %v", err)
			case tt.want == nil:
				s.Close()
			case !errors.Is(err, tt.want):
				t.Fatalf("Open: %v, want %v", err, tt.want)
			case tt.want == postgres.ErrReadOnly && !strings.Contains(err.Error(), "primary"):
				t.Errorf("Open: %v, want it to name the primary", err)
			}
			if got := schemaRows(t, conn); got != tt.after {
				t.Errorf("mnemo_schema holds %v after Open, want %v", got, tt.after)
			}
		})
	}
}

// TestOpenCurrentTakesNoLock: Open of a current schema does not wait for
// the schema lock, which CreateCollection holds while it builds indexes.
func TestOpenCurrentTakesNoLock(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	createSchema(t, dsn)
	conn := connect(t, dsn)
	const schemaLock = 0x6d6e656d6f // the package's schema lock key ("mnemo")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(schemaLock)); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(schemaLock))
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s, err := postgres.Open(tctx, dsn, nil)
	if err != nil {
		t.Fatalf("Open of a current schema while the schema lock is held: %v", err)
	}
	s.Close()
}

// TestConcurrentFirstOpen: Opens of a new schema at once all succeed;
// the ones that waited for the first to create it find it made.
func TestConcurrentFirstOpen(t *testing.T) {
	ctx := context.Background()
	for try := range 5 {
		dsn := freshDSN(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := postgres.Open(ctx, dsn, nil)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("try %d, Open %d: %v", try, i, err)
			}
		}
	}
}
