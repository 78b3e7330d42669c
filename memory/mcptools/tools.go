package mcptools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
)

// Options configure the tools; nil means the defaults, and a zero field
// its default. New reads opts once and keeps no reference to it.
type Options struct {
	// Facts is the fact store's collection; default "memories", the
	// default of store.NewSemantic.
	Facts string
	// ToolUsage names the tool-usage memory's collections
	// ("<name>.tools", "<name>.texts"); default "toolmem", the default
	// of toolmem.New.
	ToolUsage string
	// Documents is the documents' collection; default "documents".
	Documents string
	// Session is the stored conversation (window.NewStored's session)
	// that the history tools read when a call names none; empty means
	// history_search searches every stored session and history_read
	// needs a session in each call.
	Session string
	// Embedder embeds facts and tool-usage questions; nil means the
	// adapters' default, the offline hashing embedder, which matches
	// words, not meaning (to choose it: e, err := embed.NewHashing(0)).
	// An app and the tools that share a memory must use the same one: a
	// collection made by another is an error wrapping embed.ErrMismatch.
	Embedder embed.Embedder
	// Prefix is put before every tool name ("mnemo_" gives
	// "mnemo_facts_remember"), for a server whose own tools would clash;
	// letters, digits, '_', '-' and '.' only.
	Prefix string
	// MaxDocumentSize is the largest document a write may leave, in
	// bytes; default DefaultMaxDocumentSize.
	MaxDocumentSize int
	// MaxTextSize is the largest fact, question, query, tool result
	// summary or encoded tool_args a call may pass, in bytes; default
	// DefaultMaxTextSize.
	MaxTextSize int
}

// Limits (see Limits in the package doc).
const (
	// DefaultMaxDocumentSize is docstore's default size limit, 100 KiB.
	DefaultMaxDocumentSize = docstore.DefaultMaxSize
	// DefaultMaxTextSize bounds every other text argument, 16 KiB.
	DefaultMaxTextSize = 16 << 10
	// MaxResults is the most hits one recall, retrieve or search returns.
	MaxResults = 50
	// MaxListed is the most facts one facts_list page and the most
	// entries one folder listing returns.
	MaxListed = 1000
	// MaxViewBytes bounds what one documents_view shows; a longer
	// document is shown in part, with a note naming the lines shown.
	MaxViewBytes = 256 << 10
	// MaxMessageBytes bounds each message history_read returns, and
	// maxPreview each history_search hit; longer ones are cut, marked.
	MaxMessageBytes = 64 << 10
	// MaxHistoryRead is the most messages one history_read returns.
	MaxHistoryRead = 100
)

// maxPreview bounds the content of a history_search hit.
const maxPreview = 2 << 10

// Tools are mnemo's memories as MCP tools: facts, tool usage, documents
// and conversation history, all in one mnemo.Store (see the package doc
// for the list). Register adds them to an mcp.Server.
//
// Tools are safe for concurrent use by multiple goroutines: an MCP
// server runs tool calls concurrently, and so may the app that mounts
// them.
type Tools struct {
	db      mnemo.Store
	facts   *store.Semantic
	usage   *toolmem.Memory
	docs    *documents
	session string
	prefix  string
	maxText int

	// mu is held shared by each call in flight and exclusively by
	// Close, which sets closed.
	mu     sync.RWMutex
	closed bool
}

// New returns the tools on db, creating the collections they use when
// missing (so ctx bounds that); db is any backend, an engine database
// the caller has open (engine.DB.Store) or a server (package postgres).
// The caller keeps ownership of db: Close leaves it open, and an app can
// use the same memories through the adapters at the same time. Options
// that are unusable are ErrInvalid, every problem named at once.
func New(ctx context.Context, db mnemo.Store, opts *Options) (*Tools, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Facts == "" {
		o.Facts = "memories"
	}
	if o.ToolUsage == "" {
		o.ToolUsage = "toolmem"
	}
	if o.Documents == "" {
		o.Documents = "documents"
	}
	if o.MaxDocumentSize == 0 {
		o.MaxDocumentSize = DefaultMaxDocumentSize
	}
	if o.MaxTextSize == 0 {
		o.MaxTextSize = DefaultMaxTextSize
	}
	t := &Tools{db: db, session: o.Session, prefix: o.Prefix, maxText: o.MaxTextSize}
	var err error
	if t.facts, err = store.NewSemantic(ctx, db, &store.SemanticOptions{Collection: o.Facts, Embedder: o.Embedder}); err != nil {
		return nil, fmt.Errorf("mcptools: the fact store: %w", err)
	}
	if t.usage, err = toolmem.New(ctx, db, &toolmem.Options{Name: o.ToolUsage, Embedder: o.Embedder}); err != nil {
		return nil, fmt.Errorf("mcptools: the tool-usage memory: %w", err)
	}
	if t.docs, err = openDocuments(ctx, db, o.Documents, o.MaxDocumentSize); err != nil {
		return nil, fmt.Errorf("mcptools: the documents: %w", err)
	}
	return t, nil
}

// Validate reports every unusable option at once, each wrapping
// ErrInvalid; New calls it.
func (o *Options) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...))
	}
	if o.MaxDocumentSize < 0 {
		bad("MaxDocumentSize %d", o.MaxDocumentSize)
	}
	if o.MaxDocumentSize > mnemo.MaxContentLength {
		bad("MaxDocumentSize %d is over mnemo.MaxContentLength (%d)", o.MaxDocumentSize, mnemo.MaxContentLength)
	}
	if o.MaxTextSize < 0 {
		bad("MaxTextSize %d", o.MaxTextSize)
	}
	if strings.ContainsFunc(o.Prefix, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) {
		bad("Prefix %q: letters, digits, '_', '-' and '.' only", o.Prefix)
	}
	if len(o.Prefix) > 64 {
		bad("Prefix is %d bytes, max 64", len(o.Prefix))
	}
	return errors.Join(errs...)
}

// Close waits for the tool calls in flight and makes every later call
// fail with ErrClosed (as a tool error); it leaves the database open. A
// second Close does nothing.
func (t *Tools) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	return nil
}

// ErrClosed reports a tool call after Close.
var ErrClosed = errors.New("mcptools: closed")

// Register adds every tool to server, named as Names lists them; a tool
// of the same name that server had is replaced. Register may be called
// for several servers (one per HTTP session, say): they share the tools.
func (t *Tools) Register(server *mcp.Server) {
	t.registerFacts(server)
	t.registerUsage(server)
	t.registerDocuments(server)
	t.registerHistory(server)
}

// names are the tools' names without the prefix, in Register's order.
var names = []string{
	"facts_remember", "facts_recall", "facts_forget", "facts_list",
	"tool_usage_store", "tool_usage_retrieve",
	"documents_view", "documents_create", "documents_str_replace", "documents_insert",
	"documents_delete", "documents_rename", "documents_search",
	"history_sessions", "history_search", "history_read",
}

// Names returns the names of the tools Register adds, with the prefix.
// The caller owns the slice.
func (t *Tools) Names() []string {
	out := slices.Clone(names)
	for i := range out {
		out[i] = t.prefix + out[i]
	}
	return out
}

// name returns a tool's name with the prefix.
func (t *Tools) name(base string) string { return t.prefix + base }

// enter starts a call: ErrClosed after Close. The caller calls t.mu.RUnlock
// when it returns nil.
func (t *Tools) enter() error {
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// add registers a tool whose handler h returns a value, which the client
// gets as structured content and as its JSON text. Every error h returns,
// and a panic, comes back as a tool error: a result with IsError set and
// a message the model can act on (see explain).
func add[In, Out any](t *Tools, s *mcp.Server, tool *mcp.Tool, h func(context.Context, In) (Out, error)) {
	tool.Name = t.name(tool.Name)
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (_ *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if v := recover(); v != nil {
				var zero Out
				out, err = zero, fmt.Errorf("internal error in %s: %v; this is a bug in mnemo, please report it", tool.Name, v)
			}
		}()
		if err := t.enter(); err != nil {
			return nil, out, err
		}
		defer t.mu.RUnlock()
		out, err = h(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, t.explain(err)
		}
		return nil, out, nil
	})
}

// addText registers a tool whose handler h returns text, which the client
// gets as the result's one text content (the documents tools answer as
// Anthropic's memory tool does, in text). Errors are as in add.
func addText[In any](t *Tools, s *mcp.Server, tool *mcp.Tool, h func(context.Context, In) (string, error)) {
	tool.Name = t.name(tool.Name)
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, _ any, err error) {
		defer func() {
			if v := recover(); v != nil {
				res, err = nil, fmt.Errorf("internal error in %s: %v; this is a bug in mnemo, please report it", tool.Name, v)
			}
		}()
		if err := t.enter(); err != nil {
			return nil, nil, err
		}
		defer t.mu.RUnlock()
		text, err := h(ctx, in)
		if err != nil {
			return nil, nil, t.explain(err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
}

// hints say what a model can do about an error.
var hints = []struct {
	err  error
	hint string // {prefix} stands for the tool prefix
}{
	{docstore.ErrNotFound, "{prefix}documents_view on its folder, or on \"/\", lists the documents there are"},
	{docstore.ErrBadPath, "a path looks like /notes/todo.md: segments of letters, digits and punctuation, none starting with a dot"},
	{docstore.ErrPathConflict, "{prefix}documents_view lists the folder's documents"},
	{docstore.ErrNoMatch, "{prefix}documents_view the document and copy the text exactly, whitespace and line breaks included"},
	{ErrExists, "pass overwrite: true to replace it, or choose another path"},
	{store.ErrEmpty, "give some text"},
	{toolmem.ErrEmptyText, "give some text"},
	{context.Canceled, "the call was cancelled"},
	{context.DeadlineExceeded, "the call ran out of time"},
}

// explain returns err with a hint for the model, when there is one.
func (t *Tools) explain(err error) error {
	for _, h := range hints {
		if errors.Is(err, h.err) {
			return fmt.Errorf("%w (%s)", err, strings.ReplaceAll(h.hint, "{prefix}", t.prefix))
		}
	}
	return err
}

// checkText refuses a text argument over MaxTextSize.
func (t *Tools) checkText(name, s string) error {
	if len(s) > t.maxText {
		return fmt.Errorf("%w: %s is %d bytes, limit %d", ErrTooLarge, name, len(s), t.maxText)
	}
	return nil
}

// results returns the number of results a call asks for: def when n is
// 0, ErrInvalid outside [0, max].
func results(name string, n, def, max int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > max:
		return 0, fmt.Errorf("%w: %s %d, want 1 to %d", ErrInvalid, name, n, max)
	}
	return n, nil
}

func boolPtr(b bool) *bool { return &b }

// Annotations of the tools: what they do to the memory.
var (
	readOnly    = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)}
	additive    = &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)}
	destructive = &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)}
)

// annotate returns a copy of a, titled.
func annotate(a *mcp.ToolAnnotations, title string) *mcp.ToolAnnotations {
	c := *a
	c.Title = title
	return &c
}
