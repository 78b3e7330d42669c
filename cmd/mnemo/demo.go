package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/mnemodb/mnemo/analysis"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
	"github.com/mnemodb/mnemo/memory/window"
)

// demoExample is the file, in the repository, with the demo's code to copy.
const demoExample = "examples/agentmemory/main.go"

// demo stores and recalls memories through each adapter in an on-disk
// database with the offline embedder, saying in plain words what each
// step does and why each result ranks where it does, reopens the database
// to show the memories persisted, and removes the directory unless --keep
// names one. Its output holds no path, time or random ID unless --keep
// is given, so README can quote it.
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
	p("mnemo demo: an AI agent's memory, kept in an embedded database on disk and")
	p("used through mnemo's memory adapters, step by step.")
	if *keep == "" {
		p("The database is in a temporary directory, removed at the end")
		p("(--keep DIR keeps it).")
	}
	p("")
	p("Each adapter turns text into vectors with an embedder. This demo uses the")
	p("default one, which runs offline and needs no model: it matches words, not")
	p("meaning. To match by meaning, give each adapter, as its Embedder option, an")
	p("embedder backed by a model: embed.NewOpenAI (any OpenAI-compatible server)")
	p("or embed.NewOllama makes one.")

	db, err := engine.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		return err
	}
	defer func() { db.Close() }()
	steps := []func(context.Context, *engine.DB, string, func(string, ...any)) error{
		demoTools, demoFacts, demoDocuments, demoConversation, demoModelContext,
	}
	for _, step := range steps {
		p("")
		if err := step(ctx, db, dir, p); err != nil {
			return err
		}
	}

	if err := db.Close(); err != nil {
		return err
	}
	if db, err = engine.Open(filepath.Join(dir, "db"), nil); err != nil {
		return err
	}
	p("")
	if err := demoReopened(ctx, db, dir, p); err != nil {
		return err
	}
	p("")
	p("The code of these steps, to copy into your program, is in the mnemo")
	p("repository: %s (go run ./examples/agentmemory runs it).", demoExample)
	if *keep != "" {
		p("The database is kept in %s.", dir)
	}
	return nil
}

// demoTools stores tool calls and finds the one that answers a question.
func demoTools(ctx context.Context, db *engine.DB, _ string, p func(string, ...any)) error {
	tools, err := toolmem.New(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer tools.Close()
	entries := []toolmem.Entry{
		{Question: "What is the weather in Paris today?", ToolName: "get_weather", ToolArgs: map[string]any{"city": "Paris"}, ResultSummary: toolmem.Summarize("18°C, light rain")},
		{Question: "Convert 100 US dollars to euros", ToolName: "convert_currency", ToolArgs: map[string]any{"from": "USD", "to": "EUR", "amount": 100}},
		{Question: "List the open pull requests in the mnemo repository", ToolName: "github_prs", ToolArgs: map[string]any{"repo": "mnemo", "state": "open"}},
	}
	p("1. Tool memory (package toolmem) remembers which tool call answered which")
	p("   question, so that an agent can reuse it. It stored %d calls:", len(entries))
	for _, e := range entries {
		if _, err := tools.Store(ctx, e); err != nil {
			return err
		}
		p("     %q\n       -> %s %s", e.Question, e.ToolName, demoJSON(e.ToolArgs))
	}
	q := "what's the weather like in Paris"
	hits, err := tools.Retrieve(ctx, q, nil)
	if err != nil {
		return err
	}
	p("   Asked %q, it returns %s:", q, demoCount(len(hits), "call"))
	for _, h := range hits {
		p("     %s %s, similarity %.3f: %s", h.ToolName, demoJSON(h.ToolArgs), h.Similarity, demoShares(q, h.Question))
	}
	var others []string
	for _, e := range entries {
		if !slices.ContainsFunc(hits, func(h toolmem.Entry) bool { return h.Question == e.Question }) {
			others = append(others, e.Question)
		}
	}
	if len(others) > 0 {
		p("   The other %s %s with it: their similarity", demoCount(len(others), "stored question"), demoSharedBy(q, others))
		p("   is below %.2f, from which a stored call counts as related.", tools.DefaultThreshold())
	}
	return nil
}

// demoFacts stores facts and searches them.
func demoFacts(ctx context.Context, db *engine.DB, _ string, p func(string, ...any)) error {
	facts, err := store.NewSemantic(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer facts.Close()
	all := []string{"Paul works at Google", "Paul is married to Sarah", "Sarah is the sister of Emma"}
	p("2. Facts (package store) are short sentences, searched by similarity.")
	p("   It stored %d facts:", len(all))
	for _, f := range all {
		if err := facts.Store(ctx, f); err != nil {
			return err
		}
		p("     %q", f)
	}
	q, n := "where does Paul work", 2
	found, err := facts.Search(ctx, q, n)
	if err != nil {
		return err
	}
	p("   Search(%q, %d) returns the %d closest:", q, n, len(found))
	for i, f := range found {
		p("     %d. %-27s %s", i+1, fmt.Sprintf("%q", f), demoShares(q, f))
	}
	for _, f := range all {
		if !slices.Contains(found, f) {
			p("   %q %s with the question,", f, demoSharedBy(q, []string{f}))
			p("   so it ranks below them.")
		}
	}
	return nil
}

// demoDocuments writes, edits and searches documents.
func demoDocuments(ctx context.Context, _ *engine.DB, dir string, p func(string, ...any)) error {
	docs, err := docstore.Open(filepath.Join(dir, "docs"), &docstore.Options{Semantic: true})
	if err != nil {
		return err
	}
	defer docs.Close()
	trip := "Flights to Lisbon are booked for March; the hotel is near the river."
	if err := docs.Write(ctx, "/preferences.md", "Use concise responses."); err != nil {
		return err
	}
	if err := docs.Write(ctx, "/travel/lisbon.md", trip); err != nil {
		return err
	}
	p("3. Documents (package docstore) are files in a directory of their own,")
	p("   edited in place and searched by their words or by similarity.")
	p("   It wrote two:")
	p("     /preferences.md    %q", "Use concise responses.")
	p("     /travel/lisbon.md  %q", trip)
	if err := docs.Edit(ctx, "/preferences.md", "concise", "detailed"); err != nil {
		return err
	}
	content, err := docs.Read(ctx, "/preferences.md")
	if err != nil {
		return err
	}
	p("   Edit replaced %q with %q; /preferences.md now reads", "concise", "detailed")
	p("     %q", content)
	ft, err := docs.SearchFullText(ctx, "detailed", 10)
	if err != nil {
		return err
	}
	p("   A search by words for %q finds %s.", "detailed", demoPaths(ft))
	q := "when is the trip to Portugal booked"
	sem, err := docs.SearchSemantic(ctx, q, 1)
	if err != nil {
		return err
	}
	p("   A search by similarity for %q finds", q)
	p("     %s:", demoPaths(sem))
	if len(sem) > 0 {
		p("   it %s with the question. That Lisbon is in Portugal only an", demoSharedBy(q, []string{trip}))
		p("   embedder by meaning knows.")
	}
	return nil
}

// demoConversation records a conversation longer than its window and
// shows what the model is handed.
func demoConversation(ctx context.Context, db *engine.DB, _ string, p func(string, ...any)) error {
	const budget = 60
	conv, err := window.NewStored(ctx, db.Store(), "conversation", budget, &window.Options{Recall: true, RecallShare: 0.4})
	if err != nil {
		return err
	}
	defer conv.Close()
	if err := conv.RecordProtected(ctx, window.Message{Role: window.System, Content: "You are a helpful, terse assistant."}); err != nil {
		return err
	}
	turns := [][2]string{
		{"My locker code is 4711.", "Noted."},
		{"Any tips for a rainy weekend?", "Museums, a long lunch, a film."},
		{"Recommend a board game for four.", "Try Carcassonne."},
		{"How long should pasta rest?", "It should not; serve it at once."},
	}
	for _, turn := range turns {
		for i, role := range []window.Role{window.User, window.Assistant} {
			if err := conv.Record(ctx, window.Message{Role: role, Content: turn[i]}); err != nil {
				return err
			}
		}
	}
	q := "What is my locker code?"
	if err := conv.Record(ctx, window.Message{Role: window.User, Content: q}); err != nil {
		return err
	}
	msgs, err := conv.Context(ctx)
	if err != nil {
		return err
	}
	p("4. A conversation (package window) is kept whole, but the model is handed")
	p("   only what fits its context window, here %d tokens. It recorded a system", budget)
	p("   prompt, %d exchanges and the question %q.", len(turns), q)
	p("   The model is handed %d of the %d messages:", len(msgs), conv.Len())
	recalled := ""
	for _, m := range msgs {
		role := string(m.Role)
		for line := range strings.Lines(m.Content) {
			if line = strings.TrimSuffix(line, "\n"); line != "" {
				p("     %-10s %s", role, line)
				role = ""
			}
		}
		if m.Role == window.System && strings.HasPrefix(m.Content, window.RecallHeader) {
			recalled = strings.TrimPrefix(m.Content, window.RecallHeader)
		}
	}
	p("   The system prompt is protected and the newest messages fit; the older")
	p("   ones did not.")
	if recalled != "" {
		p("   Recall brought back the older exchange that %s", demoSharedBy(q, []string{recalled}))
		p("   with the question.")
	}
	return nil
}

// demoModelContext adds the stored content most like a user's message to
// a model's context.
func demoModelContext(ctx context.Context, db *engine.DB, _ string, p func(string, ...any)) error {
	vm, err := chat.NewVector(ctx, db.Store(), &chat.VectorOptions{K: 1})
	if err != nil {
		return err
	}
	defer vm.Close()
	lang := "The user's favourite programming language is Go"
	if err := vm.Add(ctx, chat.Content{Content: lang, MimeType: chat.TextPlain}); err != nil {
		return err
	}
	tz := map[string]any{"timezone": "Europe/Lisbon"}
	if err := vm.Add(ctx, chat.Content{Content: tz, MimeType: chat.JSON}); err != nil {
		return err
	}
	q := "Which language should I write the tool in?"
	mc := &chat.BufferedContext{Size: 10}
	if err := mc.AddMessage(ctx, chat.Message{Role: "user", Content: q}); err != nil {
		return err
	}
	up, err := vm.UpdateContext(ctx, mc)
	if err != nil {
		return err
	}
	p("5. Model-context memory (package chat) adds the stored contents most like")
	p("   the user's last message to the model's context. It stored")
	p("   %q and %s.", lang, demoJSON(tz))
	p("   For the message %q it added", q)
	p("   %s (K is 1):", demoCount(len(up.Memories.Results), "content"))
	for _, r := range up.Memories.Results {
		text := fmt.Sprint(r.Content)
		p("     %s, score %.3f: %s", text, r.Metadata["score"], demoShares(q, text))
	}
	return nil
}

// demoReopened opens each memory again on the reopened db and counts
// what it holds.
func demoReopened(ctx context.Context, db *engine.DB, dir string, p func(string, ...any)) error {
	tools, err := toolmem.New(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer tools.Close()
	calls, err := tools.Count(ctx)
	if err != nil {
		return err
	}
	facts, err := store.NewSemantic(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer facts.Close()
	fs, err := facts.Stats(ctx)
	if err != nil {
		return err
	}
	conv, err := window.NewStored(ctx, db.Store(), "conversation", 60, nil)
	if err != nil {
		return err
	}
	defer conv.Close()
	docs, err := docstore.Open(filepath.Join(dir, "docs"), &docstore.Options{Semantic: true})
	if err != nil {
		return err
	}
	defer docs.Close()
	paths, err := docs.ListPaths(ctx, "")
	if err != nil {
		return err
	}
	p("6. Every write was on disk when it returned. After closing the database and")
	p("   opening it again, the memories are all there: %s, %s,", demoCount(calls, "tool call"), demoCount(fs.Facts, "fact"))
	p("   %s and %s.", demoCount(len(paths), "document"), demoCount(conv.Len(), "conversation message"))
	return nil
}

// demoWords returns the distinct words of text whose terms (package
// analysis: lower-cased stems, stop words dropped, the terms the offline
// embedder and the full-text index compare) are terms of query too, in
// order.
func demoWords(query, text string) []string {
	qt := analysis.Terms(query)
	var words []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' }) {
		if slices.ContainsFunc(analysis.Terms(w), func(t string) bool { return slices.Contains(qt, t) }) && !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return words
}

// demoShares says which words text shares with query.
func demoShares(query, text string) string {
	if w := demoWords(query, text); len(w) > 0 {
		return "shares " + demoQuoted(w)
	}
	return "shares no word"
}

// demoSharedBy says which words texts, taken together, share with query,
// as the verb phrase of a sentence: "share no word", "shares "a"".
func demoSharedBy(query string, texts []string) string {
	var words []string
	for _, t := range texts {
		for _, w := range demoWords(query, t) {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	verb := "shares"
	if len(texts) > 1 {
		verb = "share"
	}
	if len(words) == 0 {
		return verb + " no word"
	}
	return verb + " " + demoQuoted(words)
}

// demoQuoted quotes each string and joins them with commas and "and".
func demoQuoted(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// demoCount returns "1 call", "3 calls".
func demoCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// demoPaths lists the documents' paths, or says there are none.
func demoPaths(docs []docstore.Document) string {
	if len(docs) == 0 {
		return "no document"
	}
	paths := make([]string, len(docs))
	for i, d := range docs {
		paths[i] = d.Path
	}
	return strings.Join(paths, ", ")
}

// demoJSON renders v as compact JSON with sorted keys.
func demoJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
