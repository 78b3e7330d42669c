package mnemo_test

import (
	"context"
	"fmt"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo/engine"
	mnemo "github.com/mnemodb/mnemo/integrations/genkit"
	"github.com/mnemodb/mnemo/memory/embed"
)

func Example() {
	ctx := context.Background()
	db, _ := engine.OpenStore("", &engine.Options{InMemory: true}) // or postgres.Open(ctx, dsn, nil)
	defer db.Close()

	g := genkit.Init(ctx)
	ds, retriever, _ := mnemo.DefineRetriever(ctx, g, db, "notes", nil, nil) // the offline hashing embedder
	mnemo.Index(ctx, []*ai.Document{
		ai.DocumentFromText("Paul works at Google", map[string]any{"source": "chat"}),
		ai.DocumentFromText("Paul was born in Lyon", map[string]any{"source": "profile"}),
		ai.DocumentFromText("The weather is rainy", map[string]any{"source": "chat"}),
	}, ds)
	resp, _ := genkit.Retrieve(ctx, g, ai.WithRetriever(retriever), ai.WithTextDocs("where does Paul work?"),
		ai.WithConfig(&mnemo.RetrieverOptions{K: 2, MinScore: new(0.2), Filter: `{"source": "chat"}`}))
	for _, d := range resp.Documents {
		fmt.Printf("%s (%s)\n", d.Content[0].Text, d.Metadata["source"])
	}
	// Output:
	// Paul works at Google (chat)
}

// ExampleOpenRetriever keeps the documents in an embedded database of
// their own (in memory here; a directory keeps them on disk).
func ExampleOpenRetriever() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	ds, retriever, _ := mnemo.OpenRetriever("", g, "notes", nil, nil)
	defer ds.Close() // closes the database

	ids, _ := ds.Index(ctx, []*ai.Document{
		ai.DocumentFromText("The team meeting moved to Thursday", nil),
		ai.DocumentFromText("The team meeting moved to Thursday", nil), // stored once
	})
	resp, _ := genkit.Retrieve(ctx, g, ai.WithRetriever(retriever), ai.WithTextDocs("when is the meeting?"))
	fmt.Println(ids[0] == ids[1], len(resp.Documents), resp.Documents[0].Content[0].Text)
	// Output:
	// true 1 The team meeting moved to Thursday
}

// ExampleDefineEmbedder registers mnemo's offline embedder with Genkit.
func ExampleDefineEmbedder() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	e, _ := mnemo.DefineEmbedder(g, "hashing", nil)
	resp, _ := genkit.Embed(ctx, g, ai.WithEmbedder(e), ai.WithTextDocs("Paul works at Google"))
	fmt.Println(e.Name(), len(resp.Embeddings[0].Embedding) == embed.DefaultDimension)
	// Output:
	// mnemo/hashing true
}
