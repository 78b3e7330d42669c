package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// serverDBs counts the schemas serverDB made, to name each its own.
var serverDBs atomic.Int64

// serverDB returns a PostgreSQL URL (from MNEMO_PG_DSN) whose mnemo
// tables live in a schema of their own, dropped when the test ends. The
// test skips without a server, and fails under CI=true.
func serverDB(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("MNEMO_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_DSN is not set under CI=true")
		}
		t.Skip("MNEMO_PG_DSN is not set (a PostgreSQL server with pgvector)")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("mnemo_cli_%d_%d", os.Getpid(), serverDBs.Add(1))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// TestServerDB runs import, get, query, export, stats and verify with a
// PostgreSQL URL for --db.
func TestServerDB(t *testing.T) {
	db := serverDB(t)
	data := filepath.Join(t.TempDir(), "in.jsonl")
	lines := `{"id":"a","vector":[1,0],"content":"alpha","metadata":{"k":"x"}}
{"id":"b","vector":[0,1],"content":"beta","metadata":{"k":"y"}}
{"id":"c","vector":[1,1],"content":"gamma"}
`
	if err := os.WriteFile(data, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, &out, &errOut); code != want {
			t.Fatalf("mnemo %s: exit %d, want %d: %s%s", strings.Join(args, " "), code, want, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	cmd(1, "import", "--db", db, "--collection", "c", "--file", data) // no --dim, no collection
	if out := cmd(0, "import", "--db", db, "--collection", "c", "--dim", "2", "--file", data); !strings.Contains(out, "committed 3") {
		t.Fatalf("import said %q", out)
	}
	if out := cmd(0, "get", "--db", db, "--collection", "c", "b"); !strings.Contains(out, `"content":"beta"`) {
		t.Fatalf("get said %q", out)
	}
	if out := cmd(0, "query", "--db", db, "--collection", "c", "--vector", "[1,0]", "--k", "1", "--filter", `{"k": {"$ne": "y"}}`); !strings.Contains(out, "1.0000  a  alpha") {
		t.Fatalf("query said %q", out)
	}
	if ids := exportIDs(t, db, "c"); strings.Join(ids, ",") != "a,b,c" {
		t.Fatalf("export: %q", ids)
	}
	if out := cmd(0, "stats", "--db", db); !strings.Contains(out, "c: 3 records, dimension 2, cosine, hnsw index") {
		t.Fatalf("stats said %q", out)
	}
	if out := cmd(0, "verify", "--db", db); !strings.Contains(out, "ok: 1 collections consistent") {
		t.Fatalf("verify said %q", out)
	}
	cmd(1, "get", "--db", db, "--collection", "missing", "a")
}

// TestServerPlace: import places records, export writes their places and
// query spreads over them on PostgreSQL exactly as on an embedded
// database.
func TestServerPlace(t *testing.T) {
	server := serverDB(t)
	lines := []string{
		`{"id":"a","content":"What is your favourite fruit?","group":"s1","position":0}`,
		`{"id":"b","content":"Mangoes, without a doubt.","group":"s1","position":1}`,
		`{"id":"c","content":"And in winter?","group":"s2"}`,
		`{"id":"d","content":"Oranges from the market.","group":"s2"}`,
		`{"id":"e","content":"A fruit salad then.","position":9,"metadata":{"k":"v"}}`,
		`{"id":"f","content":"Plain fruit, no place."}`,
	}
	file := writeTemp(t, strings.Join(lines, "\n"))
	outputs := func(db string) []string {
		var got []string
		for _, args := range [][]string{
			{"import", "--db", db, "--collection", "c", "--embedder", "hashing", "--file", file},
			{"export", "--db", db, "--collection", "c"},
			{"query", "--db", db, "--collection", "c", "--text", "favourite fruit", "--mode", "text", "--json"},
			{"query", "--db", db, "--collection", "c", "--text", "favourite fruit", "--mode", "text", "--spread", "0", "--json"},
			{"query", "--db", db, "--collection", "c", "--text", "winter", "--spread", "0.3", "--spread-window", "1"},
		} {
			var out, errOut bytes.Buffer
			if code := run(t.Context(), args, &out, &errOut); code != 0 {
				t.Fatalf("mnemo %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
			}
			got = append(got, out.String())
		}
		return got
	}
	want := outputs(filepath.Join(t.TempDir(), "db"))
	for i, got := range outputs(server) {
		if got != want[i] {
			t.Errorf("output %d on PostgreSQL:\n%s\nembedded:\n%s", i, got, want[i])
		}
	}
	// c and d take the sequence's first positions; the positions given
	// leave it alone.
	if !strings.Contains(want[1], `"content":"Oranges from the market.","group":"s2","position":1}`) || !strings.Contains(want[2], `"id":"b"`) || strings.Contains(want[3], `"id":"b"`) {
		t.Errorf("the export or the spreading is not what the test means to compare:\n%s", strings.Join(want, ""))
	}
}
