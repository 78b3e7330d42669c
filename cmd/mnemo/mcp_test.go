package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/window"
	"github.com/mnemodb/mnemo/postgres"
)

// The tests of "mnemo mcp" run the command in a process of its own (the
// test binary, see TestMain) and drive it with the MCP SDK's client, over
// standard input and output and over streamable HTTP, on an engine
// database directory and on PostgreSQL.

// mcpClient returns a client session on "mnemo mcp ARGS" over standard
// input and output; closing it closes the server's standard input.
func mcpClient(t *testing.T, args ...string) (*mcp.ClientSession, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := mnemoCommand(t, append([]string{"mcp"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &syncWriter{w: &stderr}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to mnemo mcp %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd, &stderr
}

// syncWriter is a Writer safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// callTool calls a tool and fails t on a protocol error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// recordSession stores a conversation "chat" in db, as an agent's
// window would.
func recordSession(t *testing.T, db mnemo.Store) {
	t.Helper()
	ctx := context.Background()
	w, err := window.NewStored(ctx, db, "chat", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, m := range []window.Message{
		{Role: window.User, Content: "Our deploy target is Kubernetes on GKE."},
		{Role: window.Assistant, Content: "Noted: GKE."},
	} {
		if err := w.Record(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
}

// exercise lists the tools and calls each one with good arguments, then
// with bad and huge ones, then 50 at once; a recorded session "chat" is in
// the database.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if len(names) != 16 {
		t.Fatalf("tools/list: %d tools %q, want 16", len(names), names)
	}
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"facts_remember", map[string]any{"fact": "The staging database is db-staging-2"}, `"id"`},
		{"facts_recall", map[string]any{"query": "staging database"}, "db-staging-2"},
		{"facts_list", map[string]any{}, `"total":1`},
		{"facts_forget", map[string]any{"fact": "The staging database is db-staging-2"}, `"forgotten":1`},
		{"tool_usage_store", map[string]any{"question": "disk usage of /var", "tool_name": "shell", "tool_args": map[string]any{"cmd": "du -sh /var"}}, `"id"`},
		{"tool_usage_retrieve", map[string]any{"question": "how much disk does /var use", "threshold": 0}, "du -sh /var"},
		{"documents_create", map[string]any{"path": "/memories/deploy.md", "file_text": "target: GKE\nregion: europe-west1"}, "created"},
		{"documents_str_replace", map[string]any{"path": "/memories/deploy.md", "old_str": "europe-west1", "new_str": "europe-west4"}, "europe-west4"},
		{"documents_insert", map[string]any{"path": "/memories/deploy.md", "insert_line": 0, "insert_text": "# Deploy"}, "inserted"},
		{"documents_view", map[string]any{"path": "/memories/deploy.md"}, "     1\t# Deploy\n     2\ttarget: GKE"},
		{"documents_search", map[string]any{"query": "region"}, "/memories/deploy.md\tlines 3"},
		{"documents_rename", map[string]any{"old_path": "/memories/deploy.md", "new_path": "/memories/ops/deploy.md"}, "renamed"},
		{"documents_view", map[string]any{"path": "/"}, "/memories/ops/"},
		{"documents_delete", map[string]any{"path": "/memories/ops"}, "deleted the folder /memories/ops"},
		{"history_sessions", map[string]any{}, `"chat"`},
		{"history_search", map[string]any{"query": "kubernetes"}, "GKE"},
		{"history_read", map[string]any{"session": "chat", "from": 1}, `"total":2`},
	}
	for _, c := range calls {
		res := callTool(t, cs, c.tool, c.args)
		if got := resultText(res); res.IsError || !strings.Contains(got, c.want) {
			t.Errorf("%s: error %v, %q; want it to hold %q", c.tool, res.IsError, got, c.want)
		}
	}

	bad := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"facts_recall", map[string]any{"query": 42}, "query"},
		{"documents_view", map[string]any{"path": "/../../etc/passwd"}, "bad path"},
		{"documents_create", map[string]any{"path": "/x.md"}, "file_text"},
		{"history_read", map[string]any{"session": "none"}, "no such stored session"},
		// 10 MB, through the transport: refused by the tool, with its limit.
		{"documents_create", map[string]any{"path": "/big.md", "file_text": strings.Repeat("0123456789", 1<<20)}, "limit"},
		{"facts_remember", map[string]any{"fact": strings.Repeat("0123456789", 1<<20)}, "limit"},
	}
	for _, c := range bad {
		res := callTool(t, cs, c.tool, c.args)
		if got := resultText(res); !res.IsError || !strings.Contains(got, c.want) {
			t.Errorf("%s(bad): error %v, %q; want a tool error holding %q", c.tool, res.IsError, got, c.want)
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			var res *mcp.CallToolResult
			var err error
			if i%2 == 0 {
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "facts_remember",
					Arguments: map[string]any{"fact": fmt.Sprintf("concurrent fact %d", i)}})
			} else {
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "documents_create",
					Arguments: map[string]any{"path": fmt.Sprintf("/c/%d.md", i), "file_text": "x"}})
			}
			if err == nil && res.IsError {
				err = errors.New(resultText(res))
			}
			if err != nil {
				errs <- fmt.Errorf("concurrent call %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := resultText(callTool(t, cs, "facts_list", map[string]any{})); !strings.Contains(got, `"total":25`) {
		t.Errorf("after 25 concurrent facts_remember: %s", got)
	}
	if got := resultText(callTool(t, cs, "documents_view", map[string]any{"path": "/c"})); !strings.Contains(got, "25 documents") {
		t.Errorf("after 25 concurrent documents_create: %s", got)
	}
}

// TestMCPStdio runs mnemo mcp on an engine database over standard input
// and output, then closes its input: it exits with status 0, and the
// database holds what the tools wrote.
func TestMCPStdio(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := engine.OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	recordSession(t, db)
	db.Close()

	cs, cmd, stderr := mcpClient(t, "--db", dir)
	exercise(t, cs)
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v\n%s", err, stderr)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("mnemo mcp exited with %v after its input closed:\n%s", cmd.ProcessState, stderr)
	}
	db, err = engine.OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection(context.Background(), "memories")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Count(context.Background()); n != 25 {
		t.Fatalf("the fact store holds %d facts after the server exited, want 25", n)
	}
}

// TestMCPStdioPostgres runs the same on PostgreSQL, with the agent's
// session recorded by another process's Store while the server runs.
func TestMCPStdioPostgres(t *testing.T) {
	dsn := serverDB(t)
	cs, _, _ := mcpClient(t, "--db", dsn)
	db, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recordSession(t, db)
	exercise(t, cs)
}

// startHTTP starts mnemo mcp --http on a free loopback port and returns
// the endpoint its first line of standard error names, and the process.
func startHTTP(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := mnemoCommand(t, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	first, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`at (http://\S+/mcp) `).FindStringSubmatch(first)
	if err != nil || m == nil {
		t.Fatalf("mnemo mcp --http said %q, %v", first, err)
	}
	go io.Copy(io.Discard, stderr)
	return m[1], cmd
}

func httpClient(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestMCPHTTP serves streamable HTTP on a loopback port, to two clients
// at once; a client that gives up mid-call leaves the server serving;
// SIGTERM stops it with status 130, the database closed.
func TestMCPHTTP(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := engine.OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	recordSession(t, db)
	db.Close()
	endpoint, cmd := startHTTP(t, "--db", dir)
	exercise(t, httpClient(t, endpoint))

	other := httpClient(t, endpoint)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(time.Millisecond); cancel() }()
	other.CallTool(ctx, &mcp.CallToolParams{Name: "documents_view", Arguments: map[string]any{"path": "/"}})
	if got := resultText(callTool(t, other, "facts_list", map[string]any{"limit": 1})); !strings.Contains(got, `"total":25`) {
		t.Fatalf("after a call cancelled mid-way, facts_list: %s", got)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("mnemo mcp --http did not stop within 30 s of SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit status %d after SIGTERM, want %d", code, exitInterrupted)
	}
	db, err = engine.OpenStore(dir, nil) // the server closed it
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}

// TestMCPHTTPPostgres serves streamable HTTP on PostgreSQL.
func TestMCPHTTPPostgres(t *testing.T) {
	dsn := serverDB(t)
	db, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recordSession(t, db)
	endpoint, _ := startHTTP(t, "--db", dsn)
	exercise(t, httpClient(t, endpoint))
}

// TestMCPStdioHostile writes what a broken or hostile client might on
// standard input: lines that are no JSON, no JSON-RPC message, a batch, a
// line over the size limit. Each gets an error response, and the session
// goes on; SIGTERM then stops the server with status 130.
func TestMCPStdioHostile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	cmd := mnemoCommand(t, "mcp", "--db", dir, "--create")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &syncWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewReader(stdout)
	send := func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write: %v\n%s", err, stderr.String())
		}
	}
	recv := func() map[string]any {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v\n%s", err, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("response %q: %v", line, err)
		}
		return m
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if m := recv(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tt := range []struct {
		line string
		code float64
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"facts_remember"`, -32700}, // cut short
		{`not json at all`, -32700},
		{`{"id":3,"method":"tools/list"}`, -32600}, // no "jsonrpc"
		{`[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]`, -32600},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"facts_list"}`, -32602},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool"}}`, -32602},
		{`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`, -32601},
		{`"` + strings.Repeat("x", maxRequestBytes) + `"`, -32600},
	} {
		send(tt.line)
		if m := recv(); code(m) != tt.code {
			t.Errorf("%.60q: response %v, want error code %v", tt.line, m, tt.code)
		}
	}
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"facts_list","arguments":{}}}`)
	if m := recv(); m["id"] != float64(8) || m["result"] == nil {
		t.Fatalf("a call after the bad lines: %v", m)
	}
	// A call in flight when SIGTERM comes.
	send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"documents_view","arguments":{"path":"/"}}}`)
	cmd.Process.Signal(syscall.SIGTERM)
	io.Copy(io.Discard, out)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted || !strings.Contains(stderr.String(), "mnemo mcp: interrupted") {
		t.Fatalf("after SIGTERM: %v, stderr %q; want exit status %d, interrupted", err, stderr.String(), exitInterrupted)
	}
	db, err := engine.OpenStore(dir, &engine.Options{MustExist: true})
	if err != nil {
		t.Fatalf("reopen after SIGTERM: %v", err)
	}
	db.Close()
}

// TestMCPUsageErrors: an --http address other machines could reach is
// refused, saying why, unless --allow-remote; a missing database is an
// error unless --create.
func TestMCPUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--db", dir, "--http", "0.0.0.0:0"}, 2, "listens on every network interface"},
		{[]string{"--db", dir, "--http", ":0"}, 2, "no authentication"},
		{[]string{"--db", dir, "--http", "192.0.2.1:80"}, 2, "192.0.2.1 is not a loopback address"},
		{[]string{"--db", dir, "--http", "localhost"}, 2, "want host:port"},
		{[]string{"--db", dir, "--allow-remote"}, 2, "--allow-remote needs --http"},
		{[]string{"--http", "127.0.0.1:0"}, 2, "--db is required"},
		{[]string{"--db", dir}, 1, "no database"},
		{[]string{"--db", dir, "--prefix", "a b"}, 2, "Prefix \"a b\""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(t.Context(), append([]string{"mcp"}, tt.args...), &out, &errOut); code != tt.code || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut.String(), tt.code, tt.want)
			}
		})
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused mnemo mcp made the database directory: %v", err)
	}
}

// TestMCPStdioClientGone: a client that stops reading standard output
// while calls are in flight ends the session (writes fail with EPIPE, not
// SIGPIPE): the server closes the database and exits with status 0.
func TestMCPStdioClientGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	cmd := mnemoCommand(t, "mcp", "--db", dir, "--create")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &syncWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	stdout.Close() // the client stops reading
	for i := range 100 {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"facts_remember","arguments":{"fact":"fact %d"}}}`+"\n", i+2, i)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mnemo mcp: %v (want exit status 0)\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mnemo mcp did not exit within 30 s of its client leaving")
	}
	db, err := engine.Open(dir, &engine.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Collections {
		if strings.HasPrefix(c.OpenedBy, "rebuild") {
			t.Errorf("collection %s was %s: the server did not close the database", c.Name, c.OpenedBy)
		}
	}
}
