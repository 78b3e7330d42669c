package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// syncDSN returns MNEMO_PG_SYNC_DSN: a server with pgvector of the
// test's own, whose synchronous_standby_names it sets (on the shared
// MNEMO_PG_DSN server that would make every other test's writes wait).
// Without one the test is skipped, or fails under CI=true, where the
// gate starts one.
func syncDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("MNEMO_PG_SYNC_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_SYNC_DSN is not set under CI=true: the gate must start a second server")
		}
		t.Skip("MNEMO_PG_SYNC_DSN is not set (a PostgreSQL server with pgvector of this test's own; see .ci/run)")
	}
	return dsn
}

// setSyncStandbys sets the server's synchronous_standby_names (ALTER
// SYSTEM, then a reload) and waits until its commits follow it: until a
// write to probe waits for a standby when names is set, or commits at
// once when it is empty. When t ends the setting is reset.
func setSyncStandbys(t *testing.T, dsn, probe, names string) {
	t.Helper()
	ctx := context.Background()
	admin := connect(t, dsn)
	stmt := `ALTER SYSTEM RESET synchronous_standby_names`
	if names != "" {
		stmt = fmt.Sprintf(`ALTER SYSTEM SET synchronous_standby_names = '%s'`, names)
		t.Cleanup(func() { setSyncStandbys(t, dsn, probe, "") })
	}
	for _, q := range []string{stmt, `SELECT pg_reload_conf()`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = conn.Exec(pctx, `INSERT INTO `+probe+` VALUES (1)`)
		cancel()
		conn.Close(ctx)
		waits := errors.Is(err, context.DeadlineExceeded)
		if err != nil && !waits {
			t.Fatal(err)
		}
		if waits == (names != "") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("commits do not follow synchronous_standby_names = %q 10 s after the reload", names)
		}
	}
}

// TestSyncStandbyDown: on a primary whose synchronous standby is down,
// every write waits in its commit for the standby; with a 2 s context it
// returns the context's error within 3 s, the server's wait is cancelled
// (no backend of the Store's is left waiting, holding its rows' locks),
// and the Store goes on working: reads at once, writes once the standby
// is no longer required.
func TestSyncStandbyDown(t *testing.T) {
	base := syncDSN(t)
	ctx := context.Background()
	admin := connect(t, base)
	app := appName("syncdown")
	schemas := []string{app, app + "_new"}
	for _, s := range schemas {
		if _, err := admin.Exec(ctx, `CREATE SCHEMA `+s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // after the cleanups below: the standby is no longer required
		for _, s := range schemas {
			if _, err := admin.Exec(ctx, `DROP SCHEMA `+s+` CASCADE`); err != nil {
				t.Logf("drop schema %s: %v", s, err)
			}
		}
	})
	dsn := withParam(t, withSearchPath(t, base, schemas[0]), "application_name", app)
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() }) // after the standby is no longer required: Close waits for calls in flight
	c, err := s.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "Anna lives in Oslo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCollection(ctx, "old", mnemo.CollectionConfig{Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	probe := schemas[0] + ".probe"
	if _, err := admin.Exec(ctx, `CREATE TABLE `+probe+` (n int)`); err != nil {
		t.Fatal(err)
	}

	setSyncStandbys(t, base, probe, "mnemo_down_standby")

	writes := []struct {
		name string
		f    func(context.Context) error
	}{
		{"Upsert", func(ctx context.Context) error {
			_, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "Paul works at Google"})
			return err
		}},
		{"Delete", func(ctx context.Context) error { _, err := c.Delete(ctx, "b"); return err }},
		{"CreateCollection", func(ctx context.Context) error {
			_, err := s.CreateCollection(ctx, "new", mnemo.CollectionConfig{Dimension: 2})
			return err
		}},
		{"DropCollection", func(ctx context.Context) error { return s.DropCollection(ctx, "old") }},
		{"Open of a new schema", func(ctx context.Context) error {
			s, err := postgres.Open(ctx, withParam(t, withSearchPath(t, base, schemas[1]), "application_name", app), nil)
			if err == nil {
				s.Close()
			}
			return err
		}},
	}
	type result struct {
		err     error
		elapsed time.Duration
	}
	done := make([]chan result, len(writes))
	for i, w := range writes {
		done[i] = make(chan result, 1)
		go func() {
			wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			start := time.Now()
			err := w.f(wctx)
			done[i] <- result{err, time.Since(start)}
		}()
	}
	limit := time.After(3 * time.Second)
	for i, w := range writes {
		select {
		case r := <-done[i]:
			if !errors.Is(r.err, context.DeadlineExceeded) {
				t.Errorf("%s with the synchronous standby down: %v after %v, want context.DeadlineExceeded", w.name, r.err, r.elapsed)
			}
		case <-limit:
			t.Fatalf("%s with the synchronous standby down and a 2 s context: no return within 3 s", w.name)
		}
	}

	// The server was asked to cancel each wait: no backend of the Store's
	// waits for the standby (or holds the locks of the rows it wrote).
	waiting := func() int {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'SyncRep'`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(5 * time.Second); waiting() > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d backends of the Store's wait for the synchronous standby 5 s after their calls returned", waiting())
		}
	}

	// The Store works: a read at once, with the standby still down...
	if _, err := c.Count(ctx); err != nil {
		t.Fatalf("Count with the synchronous standby down: %v", err)
	}
	// ...and writes once it is no longer required.
	setSyncStandbys(t, base, probe, "")
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Upsert(wctx, mnemo.Record{ID: "c", Vector: []float32{1, 1}, Content: "after"}); err != nil {
		t.Fatalf("Upsert after the standby is no longer required: %v", err)
	}
	if r, ok, err := c.Get(wctx, "c"); err != nil || !ok || r.Content != "after" {
		t.Fatalf("Get after the standby is no longer required: %+v, %v, %v", r, ok, err)
	}
}
