package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
	"github.com/mnemodb/mnemo/memory/window"
	"github.com/mnemodb/mnemo/simd"
)

// demo stores and recalls real content through each memory contract in an
// on-disk database with the offline embedder, prints what it recalls with
// scores and timings, reopens the database to show it persisted, and
// removes the directory unless --keep names one.
func demo(ctx context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("demo", out, stderr)
	keep := fs.String("keep", "", "keep the database in `DIR` (created if missing) instead of a temporary directory removed at the end")
	if err := fs.parse(args); err != nil {
		return err
	}
	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "mnemo-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if names, err := os.ReadDir(dir); err == nil && len(names) > 0 {
		return fs.fail("--keep %s: the directory is not empty; the demo writes a new database, into a new or empty directory", dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }
	since := func(t time.Time) string { return time.Since(t).Round(10 * time.Microsecond).String() }
	p("mnemo demo: database in %s (kernels: %s)", dir, simd.Implementation())

	t := time.Now()
	db, err := engine.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		return err
	}
	defer func() { db.Close() }()
	p("opened the engine in %s\n", since(t))

	// 1. Tool-usage memory.
	tools, err := toolmem.New(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	for _, e := range []toolmem.Entry{
		{Question: "What is the weather in Paris today?", ToolName: "get_weather", ToolArgs: map[string]any{"city": "Paris"}, ResultSummary: toolmem.Summarize("18°C, light rain")},
		{Question: "Convert 100 US dollars to euros", ToolName: "convert_currency", ToolArgs: map[string]any{"from": "USD", "to": "EUR", "amount": 100}},
		{Question: "List the open pull requests in the mnemo repository", ToolName: "github_prs", ToolArgs: map[string]any{"repo": "mnemo", "state": "open"}},
	} {
		if _, err := tools.Store(ctx, e); err != nil {
			return err
		}
	}
	q := "what's the weather like in Paris"
	t = time.Now()
	hits, err := tools.Retrieve(ctx, q, nil)
	if err != nil {
		return err
	}
	n, err := tools.Count(ctx)
	if err != nil {
		return err
	}
	p("tool memory (toolmem): %d stored; Retrieve(%q) in %s:", n, q, since(t))
	for _, h := range hits {
		p("  %.3f  %s %v  (asked: %q)", h.Similarity, h.ToolName, h.ToolArgs, h.Question)
	}

	// 2. Facts.
	facts, err := store.NewSemantic(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	for _, f := range []string{"Paul works at Google", "Paul is married to Sarah", "Sarah is the sister of Emma"} {
		if err := facts.Store(ctx, f); err != nil {
			return err
		}
	}
	t = time.Now()
	found, err := facts.Search(ctx, "work", 2)
	if err != nil {
		return err
	}
	p("\nfacts (store.Semantic): Search(\"work\") in %s: %q", since(t), found)

	// 3. Documents.
	docs, err := docstore.Open(filepath.Join(dir, "docs"), &docstore.Options{Semantic: true})
	if err != nil {
		return err
	}
	defer docs.Close()
	docs.Write(ctx, "/preferences.md", "Use concise responses.")
	docs.Write(ctx, "/travel/lisbon.md", "Flights to Lisbon are booked for March; the hotel is near the river.")
	if err := docs.Edit(ctx, "/preferences.md", "concise", "detailed"); err != nil {
		return err
	}
	content, _ := docs.Read(ctx, "preferences.md")
	ft, _ := docs.SearchFullText(ctx, "detailed", 10)
	t = time.Now()
	sem, err := docs.SearchSemantic(ctx, "when is the trip to Portugal booked", 1)
	if err != nil {
		return err
	}
	p("\ndocuments (docstore.Store): /preferences.md after Edit: %q; full-text \"detailed\": %d hit(s)", content, len(ft))
	if len(sem) > 0 {
		p("  semantic search \"when is the trip to Portugal booked\" in %s: %s", since(t), sem[0].Path)
	}

	// 4. A conversation through a small window with recall.
	conv, err := window.NewStored(ctx, db.Store(), "conversation", 60, &window.Options{Recall: true, RecallShare: 0.4})
	if err != nil {
		return err
	}
	defer conv.Close()
	conv.RecordProtected(ctx, window.Message{Role: window.System, Content: "You are a helpful, terse assistant."})
	turns := [][2]string{
		{"My locker code is 4711.", "Noted."},
		{"Any tips for a rainy weekend?", "Museums, a long lunch, a film."},
		{"Recommend a board game for four.", "Try Carcassonne."},
		{"How long should pasta rest?", "It should not; serve it at once."},
	}
	for _, turn := range turns {
		conv.Record(ctx, window.Message{Role: window.User, Content: turn[0]})
		conv.Record(ctx, window.Message{Role: window.Assistant, Content: turn[1]})
	}
	conv.Record(ctx, window.Message{Role: window.User, Content: "What is my locker code?"})
	t = time.Now()
	msgs, err := conv.Context(ctx)
	if err != nil {
		return err
	}
	p("\nconversation (window, 60-token budget, recall on): %d messages recorded, %d handed to the model in %s:", 2*len(turns)+2, len(msgs), since(t))
	for _, m := range msgs {
		p("  %-9s %s", m.Role+":", strings.ReplaceAll(m.Content, "\n", " | "))
	}

	// 5. Model-context memory.
	vm, err := chat.NewVector(ctx, db.Store(), &chat.VectorOptions{K: 1})
	if err != nil {
		return err
	}
	defer vm.Close()
	vm.Add(ctx, chat.Content{Content: "The user's favourite programming language is Go", MimeType: chat.TextPlain})
	vm.Add(ctx, chat.Content{Content: map[string]any{"timezone": "Europe/Lisbon"}, MimeType: chat.JSON})
	mc := &chat.BufferedContext{Size: 10}
	mc.AddMessage(ctx, chat.Message{Role: "user", Content: "Which language should I write the tool in?"})
	t = time.Now()
	up, err := vm.UpdateContext(ctx, mc)
	if err != nil {
		return err
	}
	p("\nmodel context (chat.VectorMemory): UpdateContext in %s added %d memory:", since(t), len(up.Memories.Results))
	for _, r := range up.Memories.Results {
		p("  score %.3f  %v", r.Metadata["score"], r.Content)
	}

	// 6. Everything persisted.
	if err := db.Close(); err != nil {
		return err
	}
	t = time.Now()
	if db, err = engine.Open(filepath.Join(dir, "db"), nil); err != nil {
		return err
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	p("\nreopened the database in %s:", since(t))
	for _, c := range st.Collections {
		p("  %-22s %3d records, opened by %s", c.Name, c.Records, c.OpenedBy)
	}
	if *keep == "" {
		p("\nremoving %s (use --keep DIR to keep it)", dir)
	}
	return nil
}
