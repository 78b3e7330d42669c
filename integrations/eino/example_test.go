package mnemo_test

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/components/retriever"
	"github.com/cloudwego/eino/schema"

	"github.com/mnemodb/mnemo/engine"
	mnemo "github.com/mnemodb/mnemo/integrations/eino"
)

func Example() {
	ctx := context.Background()
	db, _ := engine.OpenStore("", &engine.Options{InMemory: true}) // or postgres.Open(ctx, dsn, nil)
	defer db.Close()

	idx, _ := mnemo.NewIndexer(ctx, db, nil) // the offline hashing embedder
	idx.Store(ctx, []*schema.Document{
		{ID: "1", Content: "Paul works at Google", MetaData: map[string]any{"source": "chat"}},
		{ID: "2", Content: "Paul was born in Lyon", MetaData: map[string]any{"source": "profile"}},
		{ID: "3", Content: "The weather is rainy", MetaData: map[string]any{"source": "chat"}},
	})
	ret, _ := mnemo.NewRetriever(ctx, db, nil)
	docs, _ := ret.Retrieve(ctx, "where does Paul work?", retriever.WithTopK(2),
		retriever.WithScoreThreshold(0.2), mnemo.WithFilter(`{"source": "chat"}`))
	for _, d := range docs {
		fmt.Printf("%s %s (%s)\n", d.ID, d.Content, d.MetaData["source"])
	}
	// Output:
	// 1 Paul works at Google (chat)
}
