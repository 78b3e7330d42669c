package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo/memory/mcptools"
)

// maxRequestBytes bounds one JSON-RPC message the server reads, on
// standard input and over HTTP alike: a tool call with arguments up to
// it gets a tool error naming the argument's limit (documents 100 KiB,
// other texts 16 KiB), not a broken connection. Over HTTP a larger body
// is refused with 413; on standard input a larger line gets an error
// response (see lineTransport).
const maxRequestBytes = 16 << 20

// shutdownGrace is how long an interrupted HTTP server, once its tool
// calls in flight are done, gives their responses to be written.
const shutdownGrace = 200 * time.Millisecond

// mcpCmd runs "mnemo mcp": the memory tools of package mcptools as an MCP
// server, on standard input and output, or over streamable HTTP with
// --http. It serves until the client closes standard input (exit 0), or
// until SIGINT or SIGTERM (exit 130, as every command), and then closes
// the database.
func mcpCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", stdout, stderr)
	dir := dbFlag(fs)
	create := fs.Bool("create", false, "create the database directory if it does not exist")
	addr := fs.String("http", "", "serve streamable HTTP at http://`ADDR`/mcp (host:port, a loopback address such as 127.0.0.1:8080) instead of standard input and output")
	remote := fs.Bool("allow-remote", false, "let --http listen on an address other machines can reach; the server has no authentication, so anyone who reaches it reads and changes the memory")
	var o mcptools.Options
	fs.StringVar(&o.Facts, "facts", "memories", "the fact store's collection `NAME`")
	fs.StringVar(&o.ToolUsage, "toolmem", "toolmem", "the tool-usage memory's `NAME`: its collections are NAME.tools and NAME.texts")
	fs.StringVar(&o.Documents, "documents", "documents", "the documents' collection `NAME`")
	fs.StringVar(&o.Session, "session", "", "the stored conversation `NAME` (window.NewStored's session) the history tools read when a call names none; by default history_search searches every session")
	fs.StringVar(&o.Prefix, "prefix", "", "put `PREFIX` before every tool name")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return fs.fail("%v", err)
	}
	if *remote && *addr == "" {
		return fs.fail("--allow-remote needs --http")
	}
	var ln net.Listener
	if *addr != "" {
		if err := checkListen(*addr, *remote); err != nil {
			return fs.fail("%v", err)
		}
		var err error
		if ln, err = net.Listen("tcp", *addr); err != nil {
			return err
		}
		defer ln.Close()
	}
	db, err := openStore(ctx, *dir, true, *create)
	if err != nil {
		return err
	}
	defer db.Close()
	tools, err := mcptools.New(ctx, db, &o)
	if err != nil {
		return err
	}
	defer tools.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "mnemo", Title: "mnemo memory", Version: moduleVersion()}, &mcp.ServerOptions{
		Instructions: "Long-term memory: facts (facts_*), tool uses that worked (tool_usage_*), " +
			"text documents addressed by paths (documents_*, shaped as Anthropic's memory tool) and the stored conversations (history_*). " +
			"Recall or view what you know before answering; remember what the user will want you to know next time.",
	})
	tools.Register(server)
	if ln == nil {
		fmt.Fprintf(stderr, "mnemo mcp: serving %d tools on standard input and output\n", len(tools.Names()))
		// A client that stops reading makes the next write fail with
		// EPIPE, rather than SIGPIPE killing the process before it closes
		// the database.
		pipe := make(chan os.Signal, 1)
		signal.Notify(pipe, syscall.SIGPIPE)
		defer signal.Stop(pipe)
		err := server.Run(ctx, &lineTransport{r: stdin, w: stdout, max: maxRequestBytes})
		if ctx.Err() == nil && (err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, syscall.EPIPE)) {
			return nil // the client closed standard input, or stopped reading
		}
		return err
	}
	return serveHTTP(ctx, ln, server, tools, stderr)
}

// serveHTTP serves server over streamable HTTP at /mcp on ln until ctx is
// done; then it stops accepting, waits for the tool calls in flight
// (tools.Close), gives their responses shutdownGrace to be written, and
// closes what is still open: the clients' event streams, which would
// otherwise stay open until they leave.
func serveHTTP(ctx context.Context, ln net.Listener, server *mcp.Server, tools *mcptools.Tools, stderr io.Writer) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxRequestBytes}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "mnemo mcp: serving %d tools at http://%s/mcp (streamable HTTP)\n", len(tools.Names()), ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	ln.Close()
	tools.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return ctx.Err()
}

// checkListen refuses an --http address other machines could reach,
// unless remote: only a loopback IP or "localhost" is local.
func checkListen(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %s: want host:port, such as 127.0.0.1:8080: %v", addr, err)
	}
	if remote {
		return nil
	}
	ip := net.ParseIP(host)
	if host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	what := fmt.Sprintf("%s is not a loopback address", host)
	if host == "" || ip != nil && ip.IsUnspecified() {
		what = "it listens on every network interface"
	}
	return fmt.Errorf("--http %s: %s, so other machines could reach the server, which has no authentication: "+
		"anyone who reaches it could read and change the memory; listen on 127.0.0.1 (or [::1], or localhost), "+
		"or pass --allow-remote if a proxy in front of it authenticates clients", addr, what)
}
