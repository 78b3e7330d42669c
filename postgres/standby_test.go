package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The tests on a real hot standby read MNEMO_PG_STANDBY_DSN: a standby
// streaming from the MNEMO_PG_DSN server, in its database mnemo, which
// .ci/run starts with pgtest/standby.sh. The DSNs name a superuser (the
// tests pause the standby's replay).

// standbyDSN returns MNEMO_PG_STANDBY_DSN. Without one the test is
// skipped, or fails under CI=true, where the gate starts a standby.
func standbyDSN(t testing.TB) string {
	t.Helper()
	serverDSN(t)
	dsn := os.Getenv("MNEMO_PG_STANDBY_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_STANDBY_DSN is not set under CI=true: the gate must start a standby of the test server")
		}
		t.Skip("MNEMO_PG_STANDBY_DSN is not set (a hot standby of the MNEMO_PG_DSN server; see .ci/run and pgtest/standby.sh)")
	}
	return dsn
}

// onStandby returns the DSN of dsn's schema (a freshDSN on the primary)
// on the standby.
func onStandby(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema, _, _ := strings.Cut(u.Query().Get("search_path"), ",")
	return withSearchPath(t, standbyDSN(t), schema)
}

// withParam returns dsn with the run-time parameter name set to value.
func withParam(t testing.TB, dsn, name, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// waitReplay waits until the standby has replayed everything the primary
// had written when waitReplay was called.
func waitReplay(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	var lsn string
	primary := connect(t, serverDSN(t))
	if err := primary.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		t.Fatal(err)
	}
	primary.Close(ctx)
	standby := connect(t, standbyDSN(t))
	defer standby.Close(ctx)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var done bool
		if err := standby.QueryRow(ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&done); err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not replay the primary's WAL up to %s within 10 s", lsn)
		}
	}
}

// pauseReplay pauses the standby's replay of the primary's WAL until t
// ends or resume is called.
func pauseReplay(t *testing.T) (resume func()) {
	t.Helper()
	ctx := context.Background()
	standby := connect(t, standbyDSN(t))
	resume = func() {
		if _, err := standby.Exec(ctx, `SELECT pg_wal_replay_resume()`); err != nil {
			t.Errorf("resume the standby's replay: %v", err)
		}
	}
	if _, err := standby.Exec(ctx, `SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resume)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var state string
		if err := standby.QueryRow(ctx, `SELECT pg_get_wal_replay_pause_state()`).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state == "paused" {
			return resume
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby's replay is %s 10 s after pg_wal_replay_pause", state)
		}
	}
}

// backends counts the server's connections whose application_name is
// app.
func backends(t *testing.T, conn *pgx.Conn, app string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// appName is an application_name of this test process's own.
func appName(what string) string {
	return fmt.Sprintf("mnemo_%s_%d", what, os.Getpid())
}
