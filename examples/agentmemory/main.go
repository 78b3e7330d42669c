// Command agentmemory is the code behind `mnemo demo`, written to be
// copied: an AI agent's memory kept in an embedded database on disk, with
// no server, through mnemo's memory adapters. It remembers which tool
// answered which question (toolmem), short facts (store.Semantic),
// documents (docstore), a conversation that outgrows the model's context
// window (window, with recall), and contents for a model's context
// (chat.VectorMemory); then it closes the database, opens it again and
// finds the memories still there.
//
// Run it with
//
//	go run ./examples/agentmemory
//
// Every adapter here uses the default embedder, which is offline: it needs
// no network and no model file, and it matches words (and parts of words),
// not meaning. To match by meaning, make an embedder backed by a model,
// either for any OpenAI-compatible server (an empty BaseURL means OpenAI's,
// and the key is read from OPENAI_API_KEY):
//
//	e, err := embed.NewOpenAI(embed.OpenAIOptions{HTTPOptions: embed.HTTPOptions{
//		Model: "text-embedding-3-small", Dimension: 1536}})
//
// or for a local Ollama server:
//
//	e, err := embed.NewOllama(embed.HTTPOptions{Model: "nomic-embed-text", Dimension: 768})
//
// and give it to each adapter as the Embedder field of its options:
//
//	tools, err := toolmem.New(ctx, db.Store(), &toolmem.Options{Embedder: e})
//	facts, err := store.NewSemantic(ctx, db.Store(), &store.SemanticOptions{Embedder: e})
//	docs, err := docstore.Open(dir, &docstore.Options{Semantic: true, Embedder: e})
//	conv, err := window.NewStored(ctx, db.Store(), "conversation", 60, &window.Options{Recall: true, Embedder: e})
//	vm, err := chat.NewVector(ctx, db.Store(), &chat.VectorOptions{Embedder: e})
//
// A memory is bound to the embedder that made it: reopening it with
// another is an error (memory/reembed moves a memory to a new embedder).
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
	"github.com/mnemodb/mnemo/memory/window"
)

func main() {
	dir, err := os.MkdirTemp("", "agentmemory-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), dir, os.Stdout); err != nil {
		log.Print(err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
}

// run keeps an agent's memories in a database in dir, prints what it
// recalls to out, and opens the database again to find them there.
func run(ctx context.Context, dir string, out io.Writer) error {
	// One database holds every memory of the agent. engine.Open creates
	// it when dir/db does not exist; the adapters share it through
	// db.Store() and leave it open when they close.
	db, err := engine.Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		return err
	}
	if err := remember(ctx, db, dir, out); err != nil {
		db.Close()
		return err
	}
	// Every write is on disk when it returns: close the database, open it
	// again, and the memories are there.
	if err := db.Close(); err != nil {
		return err
	}
	if db, err = engine.Open(filepath.Join(dir, "db"), nil); err != nil {
		return err
	}
	defer db.Close()
	tools, err := toolmem.New(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer tools.Close()
	n, err := tools.Count(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "after reopening: %d tool calls\n", n)
	return nil
}

// remember stores and recalls memories through each adapter, on db and,
// for documents, in dir/docs.
func remember(ctx context.Context, db *engine.DB, dir string, out io.Writer) error {
	// Tool memory: which tool call answered which question, to reuse it
	// when a similar question comes.
	tools, err := toolmem.New(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer tools.Close()
	for _, e := range []toolmem.Entry{
		{Question: "What is the weather in Paris today?", ToolName: "get_weather", ToolArgs: map[string]any{"city": "Paris"}, ResultSummary: toolmem.Summarize("18°C, light rain")},
		{Question: "Convert 100 US dollars to euros", ToolName: "convert_currency", ToolArgs: map[string]any{"from": "USD", "to": "EUR", "amount": 100}},
		{Question: "List the open pull requests in the mnemo repository", ToolName: "github_prs", ToolArgs: map[string]any{"repo": "mnemo", "state": "open"}},
	} {
		if _, err := tools.Store(ctx, e); err != nil {
			return err
		}
	}
	calls, err := tools.Retrieve(ctx, "what's the weather like in Paris", nil)
	if err != nil {
		return err
	}
	for _, c := range calls {
		fmt.Fprintf(out, "tool call: %s %v (%.3f)\n", c.ToolName, c.ToolArgs, c.Similarity)
	}

	// Facts: short sentences, searched by similarity to a question.
	facts, err := store.NewSemantic(ctx, db.Store(), nil)
	if err != nil {
		return err
	}
	defer facts.Close()
	for _, f := range []string{"Paul works at Google", "Paul is married to Sarah", "Sarah is the sister of Emma"} {
		if err := facts.Store(ctx, f); err != nil {
			return err
		}
	}
	found, err := facts.Search(ctx, "where does Paul work", 2)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "facts: %q\n", found)

	// Documents: files in a directory of their own, read, edited and
	// searched by their words or (Semantic) by similarity.
	docs, err := docstore.Open(filepath.Join(dir, "docs"), &docstore.Options{Semantic: true})
	if err != nil {
		return err
	}
	defer docs.Close()
	if err := docs.Write(ctx, "/preferences.md", "Use concise responses."); err != nil {
		return err
	}
	if err := docs.Write(ctx, "/travel/lisbon.md", "Flights to Lisbon are booked for March; the hotel is near the river."); err != nil {
		return err
	}
	if err := docs.Edit(ctx, "/preferences.md", "concise", "detailed"); err != nil {
		return err
	}
	prefs, err := docs.Read(ctx, "/preferences.md")
	if err != nil {
		return err
	}
	trips, err := docs.SearchSemantic(ctx, "when is the trip to Portugal booked", 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "documents: %q", prefs)
	for _, d := range trips {
		fmt.Fprintf(out, ", %s", d.Path)
	}
	fmt.Fprintln(out)

	// A conversation: the window hands the model the newest messages that
	// fit its token budget (60 here, to make it small); with Recall, it
	// also brings back the older ones most like the newest question.
	conv, err := window.NewStored(ctx, db.Store(), "conversation", 60, &window.Options{Recall: true, RecallShare: 0.4})
	if err != nil {
		return err
	}
	defer conv.Close()
	if err := conv.RecordProtected(ctx, window.Message{Role: window.System, Content: "You are a helpful, terse assistant."}); err != nil {
		return err
	}
	for _, m := range []window.Message{
		{Role: window.User, Content: "My locker code is 4711."}, {Role: window.Assistant, Content: "Noted."},
		{Role: window.User, Content: "Any tips for a rainy weekend?"}, {Role: window.Assistant, Content: "Museums, a long lunch, a film."},
		{Role: window.User, Content: "Recommend a board game for four."}, {Role: window.Assistant, Content: "Try Carcassonne."},
		{Role: window.User, Content: "How long should pasta rest?"}, {Role: window.Assistant, Content: "It should not; serve it at once."},
		{Role: window.User, Content: "What is my locker code?"},
	} {
		if err := conv.Record(ctx, m); err != nil {
			return err
		}
	}
	msgs, err := conv.Context(ctx) // what to send to the model
	if err != nil {
		return err
	}
	for _, m := range msgs {
		fmt.Fprintf(out, "conversation: %s: %q\n", m.Role, m.Content)
	}

	// Contents for a model's context: UpdateContext adds the ones most
	// like the context's last message to it, as a system message.
	vm, err := chat.NewVector(ctx, db.Store(), &chat.VectorOptions{K: 1})
	if err != nil {
		return err
	}
	defer vm.Close()
	if err := vm.Add(ctx, chat.Content{Content: "The user's favourite programming language is Go", MimeType: chat.TextPlain}); err != nil {
		return err
	}
	if err := vm.Add(ctx, chat.Content{Content: map[string]any{"timezone": "Europe/Lisbon"}, MimeType: chat.JSON}); err != nil {
		return err
	}
	mc := &chat.BufferedContext{Size: 10}
	if err := mc.AddMessage(ctx, chat.Message{Role: "user", Content: "Which language should I write the tool in?"}); err != nil {
		return err
	}
	up, err := vm.UpdateContext(ctx, mc)
	if err != nil {
		return err
	}
	for _, r := range up.Memories.Results {
		fmt.Fprintf(out, "model context: %v\n", r.Content)
	}

	return nil
}
