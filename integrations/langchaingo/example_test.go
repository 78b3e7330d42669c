package mnemo_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"

	"github.com/mnemodb/mnemo/engine"
	mnemo "github.com/mnemodb/mnemo/integrations/langchaingo"
)

func Example() {
	ctx := context.Background()
	db, _ := engine.OpenStore("", &engine.Options{InMemory: true}) // or postgres.Open(ctx, dsn, nil)
	defer db.Close()

	store, _ := mnemo.NewStore(ctx, db, nil) // the offline hashing embedder
	store.AddDocuments(ctx, []schema.Document{
		{PageContent: "Paul works at Google", Metadata: map[string]any{"source": "chat"}},
		{PageContent: "Paul was born in Lyon", Metadata: map[string]any{"source": "profile"}},
		{PageContent: "The weather is rainy", Metadata: map[string]any{"source": "chat"}},
	})
	docs, _ := store.SimilaritySearch(ctx, "where does Paul work?", 2,
		vectorstores.WithFilters(map[string]any{"source": "chat"}),
		vectorstores.WithScoreThreshold(0.2))
	for _, d := range docs {
		fmt.Printf("%s (%s)\n", d.PageContent, d.Metadata["source"])
	}
	// Output:
	// Paul works at Google (chat)
}

// ExampleHistory keeps a conversation in a database and resumes it after a
// restart.
func ExampleHistory() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "history-example-")
	defer os.RemoveAll(dir)

	h, _ := mnemo.OpenHistory(dir, "session-1", nil)
	h.AddUserMessage(ctx, "My name is Ada.")
	h.AddAIMessage(ctx, "Nice to meet you, Ada.")
	h.Close()

	h, _ = mnemo.OpenHistory(dir, "session-1", nil) // after a restart
	defer h.Close()
	msgs, _ := h.Messages(ctx)
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.GetType(), m.GetContent())
	}
	// Output:
	// human: My name is Ada.
	// ai: Nice to meet you, Ada.
}

// ExampleNewHistory keeps the conversation in the database that holds
// the documents: any mnemo.Store, here an in-memory engine.
func ExampleNewHistory() {
	ctx := context.Background()
	db, _ := engine.OpenStore("", &engine.Options{InMemory: true}) // or postgres.Open(ctx, dsn, nil)
	defer db.Close()

	h, _ := mnemo.NewHistory(ctx, db, "session-1", nil)
	defer h.Close() // leaves db open
	h.AddUserMessage(ctx, "Where does Paul work?")
	h.AddAIMessage(ctx, "At Google.")
	msgs, _ := h.Messages(ctx)
	fmt.Println(len(msgs), msgs[1].GetContent())
	// Output:
	// 2 At Google.
}
