package mcptools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// backends runs f on each backend as a subtest: an in-memory engine
// database, and a PostgreSQL schema of its own on the server MNEMO_PG_DSN
// names (skipped without one, failed under CI=true).
func backends(t *testing.T, f func(t *testing.T, db mnemo.Store)) {
	t.Run("engine", func(t *testing.T) {
		db, err := engine.OpenStore("", &engine.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		f(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		f(t, pgtest.Open(t))
	})
}

// connect returns a client session on a server that has tools on db
// mounted, over an in-memory transport; all closed when t ends.
func connect(t *testing.T, db mnemo.Store, opts *Options) (*mcp.ClientSession, *Tools) {
	t.Helper()
	ctx := context.Background()
	tools, err := New(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	tools.Register(server)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		tools.Close()
	})
	return cs, tools
}

// call calls a tool and returns its result; a protocol error fails t.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// text returns the text of a result's contents.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok calls a tool that must succeed and returns its text.
func ok(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	return text(res)
}

// fails calls a tool that must fail with a tool error whose text holds
// each of want, and returns the text.
func fails(t testing.TB, cs *mcp.ClientSession, name string, args any, want ...string) string {
	t.Helper()
	res := call(t, cs, name, args)
	msg := text(res)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded: %s", name, args, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s(%v): error %q lacks %q", name, args, msg, w)
		}
	}
	return msg
}

// decode calls a tool that must succeed and decodes its structured
// result into v.
func decode(t testing.TB, cs *mcp.ClientSession, name string, args any, v any) {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
}
