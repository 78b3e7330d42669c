package reembed_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/reembed"
	"github.com/mnemodb/mnemo/memory/store"
)

// Example moves a fact memory to another embedder (here the offline one
// at 256 dimensions; in practice a model server's, embed.NewOpenAI or
// embed.NewOllama) and searches it through the new one.
func Example() {
	ctx := context.Background()
	db, err := engine.OpenStore("", &engine.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	facts, _ := store.NewSemantic(ctx, db, nil)
	facts.Store(ctx, "Paul works at Google")
	facts.Store(ctx, "Sarah plays the cello")
	facts.Close()

	next, _ := embed.NewHashing(256)
	res, err := reembed.Collection(ctx, db, "memories", next, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d records, %d embedded\n", res.Records, res.Embedded)

	facts, _ = store.NewSemantic(ctx, db, &store.SemanticOptions{Embedder: next})
	defer facts.Close()
	found, _ := facts.Search(ctx, "cello", 1)
	fmt.Println(found)
	// Output:
	// 2 records, 2 embedded
	// [Sarah plays the cello]
}
