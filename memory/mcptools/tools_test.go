package mcptools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
	"github.com/mnemodb/mnemo/memory/window"
)

// TestListTools: the server lists every tool Names names, each with a
// description, and a description on every argument.
func TestListTools(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, tools := connect(t, db, &Options{Prefix: "mem_"})
		var listed []string
		for tool, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			listed = append(listed, tool.Name)
			if len(tool.Description) < 40 {
				t.Errorf("%s: description %q is too short to follow", tool.Name, tool.Description)
			}
			if tool.Annotations == nil || tool.Annotations.Title == "" {
				t.Errorf("%s: no annotations with a title", tool.Name)
			}
			s, ok := tool.InputSchema.(map[string]any)
			if !ok || s["type"] != "object" {
				t.Fatalf("%s: input schema %v", tool.Name, tool.InputSchema)
			}
			props, _ := s["properties"].(map[string]any)
			for name, p := range props {
				if d, _ := p.(map[string]any)["description"].(string); d == "" {
					t.Errorf("%s: argument %s has no description", tool.Name, name)
				}
			}
		}
		want := tools.Names()
		slices.Sort(listed)
		slices.Sort(want)
		if !slices.Equal(listed, want) || len(want) != 16 || !strings.HasPrefix(want[0], "mem_") {
			t.Fatalf("listed %q, Names %q", listed, want)
		}
	})
}

// TestFacts: remember, recall, list and forget, and the app's
// store.Semantic on the same database sees the same facts.
func TestFacts(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		for _, f := range []string{"Paul works at Google", "The user prefers metric units", "Paul works at Google"} {
			var out factsRememberOut
			decode(t, cs, "facts_remember", map[string]any{"fact": f}, &out)
			if out.ID == "" || out.Fact != f {
				t.Fatalf("facts_remember(%q) = %+v", f, out)
			}
		}
		var recalled factsRecallOut
		decode(t, cs, "facts_recall", map[string]any{"query": "where does Paul work", "limit": 1}, &recalled)
		if len(recalled.Facts) != 1 || recalled.Facts[0].Fact != "Paul works at Google" {
			t.Fatalf("facts_recall = %+v", recalled)
		}
		var list factsListOut
		decode(t, cs, "facts_list", map[string]any{"offset": 1, "limit": 5}, &list)
		if list.Total != 3 || !slices.Equal(list.Facts, []string{"The user prefers metric units", "Paul works at Google"}) {
			t.Fatalf("facts_list from 1 = %+v", list)
		}
		app, err := store.NewSemantic(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Store(context.Background(), "The launch is on May 3"); err != nil {
			t.Fatal(err)
		}
		var forgot factsForgetOut
		decode(t, cs, "facts_forget", map[string]any{"fact": "Paul works at Google"}, &forgot)
		if forgot.Forgotten != 2 {
			t.Fatalf("facts_forget = %+v, want 2 forgotten", forgot)
		}
		decode(t, cs, "facts_forget", map[string]any{"fact": "never stored"}, &forgot)
		if forgot.Forgotten != 0 {
			t.Fatalf("facts_forget of an unknown fact = %+v", forgot)
		}
		all, err := app.ListAll(context.Background())
		if err != nil || !slices.Equal(all, []string{"The user prefers metric units", "The launch is on May 3"}) {
			t.Fatalf("the app's fact store lists %q, %v", all, err)
		}
		fails(t, cs, "facts_remember", map[string]any{"fact": "   "}, "empty", "give some text")
		var none factsRecallOut
		decode(t, cs, "facts_recall", map[string]any{"query": ""}, &none)
		if none.Facts == nil || len(none.Facts) != 0 {
			t.Fatalf("facts_recall of nothing = %+v, want an empty list", none)
		}
	})
}

// TestToolUsage: an entry stored through the tools comes back from
// retrieve, and from the app's toolmem.Memory on the same database.
func TestToolUsage(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		var stored usageStoreOut
		decode(t, cs, "tool_usage_store", map[string]any{
			"question": "What is the weather in Paris?", "tool_name": "get_weather",
			"tool_args": map[string]any{"city": "Paris", "days": 3}, "result_summary": strings.Repeat("sunny ", 100),
		}, &stored)
		var got usageRetrieveOut
		decode(t, cs, "tool_usage_retrieve", map[string]any{"question": "weather in Paris tomorrow", "threshold": 0.1}, &got)
		if len(got.Entries) != 1 || got.Entries[0].ID != stored.ID || got.Entries[0].ToolName != "get_weather" ||
			fmt.Sprint(got.Entries[0].ToolArgs) != "map[city:Paris days:3]" || len([]rune(got.Entries[0].ResultSummary)) != toolmem.SummaryLength {
			t.Fatalf("tool_usage_retrieve = %+v", got)
		}
		app, err := toolmem.New(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := app.Count(context.Background()); err != nil || n != 1 {
			t.Fatalf("the app's tool memory counts %d, %v", n, err)
		}
		fails(t, cs, "tool_usage_store", map[string]any{"question": "q", "tool_name": ""}, "tool_name is empty")
		fails(t, cs, "tool_usage_retrieve", map[string]any{"question": "q", "threshold": 2}, "threshold 2")
		fails(t, cs, "tool_usage_retrieve", map[string]any{"question": "q", "top_k": MaxResults + 1}, "top_k")
	})
}

// TestDocuments drives the document tools through a session of edits,
// on the shape of Anthropic's memory tool.
func TestDocuments(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		if got := ok(t, cs, "documents_view", map[string]any{"path": "/"}); !strings.Contains(got, "no documents yet") {
			t.Fatalf("view of an empty root: %q", got)
		}
		ok(t, cs, "documents_create", map[string]any{"path": "/memories/plan.md", "file_text": "# Plan\n- ship\n- test"})
		ok(t, cs, "documents_create", map[string]any{"path": "memories/people/paul.md", "file_text": "Paul works at Google."})
		fails(t, cs, "documents_create", map[string]any{"path": "/memories/plan.md", "file_text": "x"}, "already exists", "overwrite")
		fails(t, cs, "documents_create", map[string]any{"path": "/memories", "file_text": "x"}, "is a folder")
		fails(t, cs, "documents_create", map[string]any{"path": "/memories/plan.md/x.md", "file_text": "x"}, "is a document, not a folder")

		view := ok(t, cs, "documents_view", map[string]any{"path": "/memories/plan.md"})
		if want := "Here's the content of /memories/plan.md with line numbers:\n     1\t# Plan\n     2\t- ship\n     3\t- test"; view != want {
			t.Fatalf("view:\n%s\nwant:\n%s", view, want)
		}
		if got := ok(t, cs, "documents_view", map[string]any{"path": "/memories/plan.md", "view_range": []int{2, -1}}); !strings.HasSuffix(got, "line numbers:\n     2\t- ship\n     3\t- test") {
			t.Fatalf("view_range [2, -1]: %q", got)
		}
		fails(t, cs, "documents_view", map[string]any{"path": "/memories/plan.md", "view_range": []int{3, 9}}, "lines 1 to 3")
		fails(t, cs, "documents_view", map[string]any{"path": "/memories", "view_range": []int{1, 2}}, "/memories is a folder")
		fails(t, cs, "documents_view", map[string]any{"path": "/", "view_range": []int{1, 2}}, "/ is a folder")
		listing := ok(t, cs, "documents_view", map[string]any{"path": "/memories/"})
		for _, want := range []string{"(2 documents in all)", "\t/memories/plan.md", "\t/memories/people/", "\t/memories/people/paul.md"} {
			if !strings.Contains(listing, want) {
				t.Errorf("listing lacks %q:\n%s", want, listing)
			}
		}

		edited := ok(t, cs, "documents_str_replace", map[string]any{"path": "/memories/plan.md", "old_str": "- ship", "new_str": "- ship v2\n- announce"})
		if !strings.Contains(edited, "     2\t- ship v2\n     3\t- announce\n     4\t- test") {
			t.Fatalf("str_replace snippet: %q", edited)
		}
		fails(t, cs, "documents_str_replace", map[string]any{"path": "/memories/plan.md", "old_str": "- ", "new_str": "* "}, "occurs 3 times", "lines 2, 3, 4")
		fails(t, cs, "documents_str_replace", map[string]any{"path": "/memories/plan.md", "old_str": "nowhere", "new_str": ""}, "does not occur", "documents_view")
		fails(t, cs, "documents_str_replace", map[string]any{"path": "/memories/none.md", "old_str": "a", "new_str": "b"}, "no such document")

		ok(t, cs, "documents_insert", map[string]any{"path": "/memories/plan.md", "insert_line": 0, "insert_text": "<!-- top -->\n"})
		ok(t, cs, "documents_insert", map[string]any{"path": "/memories/plan.md", "insert_line": 5, "insert_text": "- celebrate"})
		fails(t, cs, "documents_insert", map[string]any{"path": "/memories/plan.md", "insert_line": 7, "insert_text": "x"}, "0 to 6")
		content, _, err := mustTools(t, db).docs.get(context.Background(), "/memories/plan.md")
		if want := "<!-- top -->\n# Plan\n- ship v2\n- announce\n- test\n- celebrate"; err != nil || content != want {
			t.Fatalf("after inserts: %q, %v; want %q", content, err, want)
		}

		if got := ok(t, cs, "documents_search", map[string]any{"query": "Google"}); !strings.Contains(got, "/memories/people/paul.md\tlines 1") {
			t.Fatalf("search: %q", got)
		}
		ok(t, cs, "documents_rename", map[string]any{"old_path": "/memories/people", "new_path": "/contacts"})
		fails(t, cs, "documents_rename", map[string]any{"old_path": "/memories", "new_path": "/memories/inner"}, "into itself")
		fails(t, cs, "documents_rename", map[string]any{"old_path": "/memories/plan.md", "new_path": "/contacts"}, "already exists")
		ok(t, cs, "documents_rename", map[string]any{"old_path": "/memories/plan.md", "new_path": "/plan.md"})
		if got := ok(t, cs, "documents_view", map[string]any{"path": "/contacts/paul.md"}); !strings.Contains(got, "Paul works at Google.") {
			t.Fatalf("after moving the folder: %q", got)
		}
		fails(t, cs, "documents_view", map[string]any{"path": "/memories"}, "no such document")

		ok(t, cs, "documents_create", map[string]any{"path": "/contacts/ann.md", "file_text": "Ann"})
		if got := ok(t, cs, "documents_delete", map[string]any{"path": "/contacts"}); !strings.Contains(got, "the 2 documents") {
			t.Fatalf("delete folder: %q", got)
		}
		if got := ok(t, cs, "documents_delete", map[string]any{"path": "/plan.md"}); got != "Successfully deleted /plan.md" {
			t.Fatalf("delete: %q", got)
		}
		fails(t, cs, "documents_delete", map[string]any{"path": "/plan.md"}, "no such document")
		fails(t, cs, "documents_delete", map[string]any{"path": "/"}, "root folder")
	})
}

// mustTools returns tools on db, for a test to look behind the MCP layer.
func mustTools(t *testing.T, db mnemo.Store) *Tools {
	t.Helper()
	tools, err := New(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// TestDocumentPaths: paths that try to leave the root, or are malformed,
// are refused with the reason, and write nothing.
func TestDocumentPaths(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		bad := []string{"../etc/passwd", "/memories/../../x.md", "/a/%2e%2e/b.md", `\windows\x.md`, "C:/x.md", "//host/share.md",
			"/.ssh/id_rsa", "/a\x00b.md", "/a\nb.md", "/" + strings.Repeat("a", mnemo.MaxIDLength) + ".md", ""}
		for _, p := range bad {
			fails(t, cs, "documents_create", map[string]any{"path": p, "file_text": "x"}, "bad path")
			fails(t, cs, "documents_rename", map[string]any{"old_path": "/x.md", "new_path": p}, "bad path")
		}
		if got := ok(t, cs, "documents_view", map[string]any{"path": "/"}); !strings.Contains(got, "no documents yet") {
			t.Fatalf("a bad path wrote something: %q", got)
		}
	})
}

// TestHistory: the history tools search and read what a stored window
// records, while the window has its session open.
func TestHistory(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		ctx := context.Background()
		for session, msgs := range map[string][]string{
			"support": {"My order 1182 arrived damaged.", "Sorry! A replacement for order 1182 ships today."},
			"billing": {"Why was I charged twice in March?", "The second March charge was refunded."},
		} {
			w, err := window.NewStored(ctx, db, session, 1000, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i, m := range msgs {
				role := window.User
				if i%2 == 1 {
					role = window.Assistant
				}
				if err := w.Record(ctx, window.Message{Role: role, Content: m}); err != nil {
					t.Fatal(err)
				}
			}
		}
		cs, _ := connect(t, db, nil)
		var sessions historySessionsOut
		decode(t, cs, "history_sessions", map[string]any{}, &sessions)
		if !slices.Equal(sessions.Sessions, []string{"billing", "support"}) {
			t.Fatalf("history_sessions = %+v", sessions)
		}
		var found historySearchOut
		decode(t, cs, "history_search", map[string]any{"query": "charged march"}, &found)
		if len(found.Messages) == 0 || found.Messages[0].Session != "billing" || found.Messages[0].Index != 0 {
			t.Fatalf("history_search over every session = %+v", found)
		}
		decode(t, cs, "history_search", map[string]any{"query": "order", "session": "support", "limit": 1}, &found)
		if len(found.Messages) != 1 || found.Messages[0].Session != "support" {
			t.Fatalf("history_search in support = %+v", found)
		}
		var read historyReadOut
		decode(t, cs, "history_read", map[string]any{"session": "support", "from": 1}, &read)
		if read.Total != 2 || len(read.Messages) != 1 || read.Messages[0].Role != "assistant" || read.Messages[0].Index != 1 {
			t.Fatalf("history_read = %+v", read)
		}
		// A tool call and its result, as an agent records them.
		w, err := window.NewStored(ctx, db, "tools", 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, m := range []window.Message{
			{Role: window.User, Content: "Weather in Oslo?"},
			{Role: window.Assistant, ToolCalls: []window.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}}},
			{Role: window.Tool, ToolCallID: "c1", Content: "-3 C, snow"},
		} {
			if err := w.Record(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		got := ok(t, cs, "history_read", map[string]any{"session": "tools", "from": 1})
		for _, want := range []string{`"tool_calls":[{"arguments":"{\"city\":\"Oslo\"}","id":"c1","name":"weather"}]`, `"tool_call_id":"c1"`, `"role":"tool"`} {
			if !strings.Contains(got, want) {
				t.Errorf("history_read of tool calls: %s\nlacks %s", got, want)
			}
		}
		fails(t, cs, "history_read", map[string]any{}, "name a session", "history_sessions")
		fails(t, cs, "history_read", map[string]any{"session": "nope"}, "no such stored session")
		fails(t, cs, "history_search", map[string]any{"query": "x", "session": "nope"}, "no such stored session")

		// With a default session, calls that name none read it.
		cs2, _ := connect(t, db, &Options{Session: "billing"})
		decode(t, cs2, "history_read", map[string]any{"count": 1}, &read)
		if read.Total != 2 || len(read.Messages) != 1 || read.Messages[0].Session != "billing" {
			t.Fatalf("history_read of the default session = %+v", read)
		}
		decode(t, cs2, "history_search", map[string]any{"query": "order"}, &found)
		if len(found.Messages) != 0 {
			t.Fatalf("history_search of the default session found %+v in another", found)
		}
	})
}

// TestBadArguments: arguments of the wrong type, missing, unknown or out
// of range come back as tool errors saying what is wrong.
func TestBadArguments(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		tests := []struct {
			tool string
			args any
			want string
		}{
			{"facts_recall", map[string]any{"query": 5}, "want \"string\""},
			{"facts_recall", map[string]any{}, "query"},
			{"facts_recall", map[string]any{"query": "x", "limit": "ten"}, "limit"},
			{"facts_recall", map[string]any{"query": "x", "limit": -1}, "limit -1"},
			{"facts_recall", map[string]any{"query": "x", "colour": "red"}, "colour"},
			{"facts_list", map[string]any{"offset": -3}, "offset -3"},
			{"facts_list", map[string]any{"limit": MaxListed + 1}, "limit"},
			{"documents_view", map[string]any{"path": []string{"/a"}}, "path"},
			{"documents_view", map[string]any{"path": "/a.md", "view_range": []int{1}}, "view_range"},
			{"documents_insert", map[string]any{"path": "/a.md", "insert_text": "x"}, "insert_line"},
			{"documents_insert", map[string]any{"path": "/a.md", "insert_line": 1.5, "insert_text": "x"}, "insert_line"},
			{"documents_str_replace", map[string]any{"path": "/a.md", "old_str": "", "new_str": "x"}, "old_str is empty"},
			{"tool_usage_store", map[string]any{"question": "q", "tool_name": "t", "tool_args": "not an object"}, "tool_args"},
			{"history_read", map[string]any{"session": "s", "count": 1000}, "count"},
			{"history_search", map[string]any{"query": "x", "session": "\x01"}, "session name"},
		}
		ok(t, cs, "documents_create", map[string]any{"path": "/a.md", "file_text": "a"})
		for _, tt := range tests {
			t.Run(tt.tool, func(t *testing.T) {
				fails(t, cs, tt.tool, tt.args, tt.want)
			})
		}
	})
}

// TestHugeArguments: arguments over their limits, by a byte or by
// megabytes, are refused with their limit, before anything is stored;
// arguments at the limit are taken.
func TestHugeArguments(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		huge := strings.Repeat("memory ", 2<<20/7) // 2 MB (the cmd tests send 10 MB through the transports)
		text := strings.Repeat("a", DefaultMaxTextSize+1)
		doc := strings.Repeat("a", DefaultMaxDocumentSize+1)
		tests := []struct {
			tool string
			args map[string]any
		}{
			{"facts_remember", map[string]any{"fact": huge}},
			{"documents_create", map[string]any{"path": "/big.md", "file_text": huge}},
			{"facts_remember", map[string]any{"fact": text}},
			{"facts_recall", map[string]any{"query": text}},
			{"facts_forget", map[string]any{"fact": text}},
			{"tool_usage_store", map[string]any{"question": text, "tool_name": "t"}},
			{"tool_usage_store", map[string]any{"question": "q", "tool_name": "t", "tool_args": map[string]any{"blob": text}}},
			{"tool_usage_retrieve", map[string]any{"question": text}},
			{"documents_create", map[string]any{"path": "/big.md", "file_text": doc}},
			{"documents_str_replace", map[string]any{"path": "/a.md", "old_str": "a", "new_str": doc}},
			{"documents_insert", map[string]any{"path": "/a.md", "insert_line": 0, "insert_text": doc}},
			{"documents_search", map[string]any{"query": text}},
			{"history_search", map[string]any{"query": text}},
		}
		ok(t, cs, "documents_create", map[string]any{"path": "/a.md", "file_text": "a"})
		for _, tt := range tests {
			fails(t, cs, tt.tool, tt.args, "too large", "limit")
		}
		var list factsListOut
		decode(t, cs, "facts_list", map[string]any{}, &list)
		if list.Total != 0 {
			t.Fatalf("a refused fact was stored: %d facts", list.Total)
		}
		// At the limits.
		ok(t, cs, "facts_remember", map[string]any{"fact": text[1:]})
		ok(t, cs, "documents_create", map[string]any{"path": "/big.md", "file_text": doc[1:]})
		// Edits that would grow a document past the limit, a little at a time.
		half := strings.Repeat("x", DefaultMaxDocumentSize/2+1)
		ok(t, cs, "documents_insert", map[string]any{"path": "/a.md", "insert_line": 1, "insert_text": half})
		fails(t, cs, "documents_insert", map[string]any{"path": "/a.md", "insert_line": 1, "insert_text": half}, "too large", "limit")
	})
}

// TestConcurrentCalls: many calls at once, edits of one document among
// them, lose nothing.
func TestConcurrentCalls(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, _ := connect(t, db, nil)
		ok(t, cs, "documents_create", map[string]any{"path": "/log.md", "file_text": "start"})
		const n = 50
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				var res *mcp.CallToolResult
				var err error
				switch i % 3 {
				case 0:
					res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "documents_insert",
						Arguments: map[string]any{"path": "/log.md", "insert_line": 1, "insert_text": fmt.Sprintf("line %d", i)}})
				case 1:
					res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "facts_remember",
						Arguments: map[string]any{"fact": fmt.Sprintf("fact number %d", i)}})
				default:
					res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "documents_view",
						Arguments: map[string]any{"path": "/log.md"}})
				}
				if err == nil && res.IsError {
					err = errors.New(text(res))
				}
				if err != nil {
					errs <- fmt.Errorf("call %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		view := ok(t, cs, "documents_view", map[string]any{"path": "/log.md"})
		for i := 0; i < n; i += 3 {
			if !strings.Contains(view, fmt.Sprintf("\tline %d\n", i)) && !strings.HasSuffix(view, fmt.Sprintf("\tline %d", i)) {
				t.Errorf("insert %d lost:\n%s", i, view)
			}
		}
		var list factsListOut
		decode(t, cs, "facts_list", map[string]any{}, &list)
		if list.Total != (n+1)/3 {
			t.Errorf("%d facts, want %d", list.Total, (n+1)/3)
		}
	})
}

// TestClose: a call after Close is a tool error; the database stays open.
func TestClose(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, tools := connect(t, db, nil)
		ok(t, cs, "facts_remember", map[string]any{"fact": "before close"})
		tools.Close()
		fails(t, cs, "facts_list", map[string]any{}, "closed")
		if _, err := db.Collections(context.Background()); err != nil {
			t.Fatalf("the database was closed: %v", err)
		}
	})
}

// TestOptions: unusable options are ErrInvalid, every one named.
func TestOptions(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		_, err := New(context.Background(), db, &Options{Prefix: "my tools/", MaxDocumentSize: -1, MaxTextSize: -2})
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("New = %v, want ErrInvalid", err)
		}
		for _, want := range []string{"Prefix", "MaxDocumentSize -1", "MaxTextSize -2"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
		if _, err := New(context.Background(), nil, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("New(nil db) = %v", err)
		}
		// A collection of another kind under a tool's name is refused.
		if _, err := store.NewSemantic(context.Background(), db, &store.SemanticOptions{Collection: "notes"}); err != nil {
			t.Fatal(err)
		}
		if _, err := New(context.Background(), db, &Options{Documents: "notes"}); !errors.Is(err, mnemo.ErrCollectionKind) {
			t.Errorf("documents in a fact store's collection: %v, want mnemo.ErrCollectionKind", err)
		}
	})
}

// TestViewLargeDocument: a document larger than one view (written by
// another program, past the tools' size limit) is shown in part, with
// the view_range that shows the rest; a line of megabytes is cut.
func TestViewLargeDocument(t *testing.T) {
	backends(t, func(t *testing.T, db mnemo.Store) {
		cs, tools := connect(t, db, nil)
		var b strings.Builder
		for i := range 40000 {
			fmt.Fprintf(&b, "line %d of a long document\n", i+1)
		}
		b.WriteString(strings.Repeat("é", 1<<20))
		if err := tools.docs.put(context.Background(), mnemo.Record{ID: "/big.md", Vector: unit, Content: b.String()}); err != nil {
			t.Fatal(err)
		}
		got := ok(t, cs, "documents_view", map[string]any{"path": "/big.md"})
		if len(got) > MaxViewBytes+1024 || !strings.Contains(got, "of 40001 shown") || !strings.Contains(got, "view_range [") {
			t.Fatalf("view of a large document: %d bytes, ending %q", len(got), got[max(0, len(got)-200):])
		}
		got = ok(t, cs, "documents_view", map[string]any{"path": "/big.md", "view_range": []int{40001, -1}})
		if len(got) > MaxViewBytes || !strings.Contains(got, "more bytes on this line") || !utf8.ValidString(got) {
			t.Fatalf("view of a long line: %d bytes, ending %q", len(got), got[max(0, len(got)-100):])
		}
	})
}
