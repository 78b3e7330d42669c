package store_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/memory/store"
)

func ExampleSemantic() {
	ctx := context.Background()
	facts, err := store.OpenSemantic("", nil) // in memory, offline embedder
	if err != nil {
		panic(err)
	}
	defer facts.Close()
	facts.Store(ctx, "Paul works at Google")
	facts.Store(ctx, "Paul is married to Sarah")
	facts.Store(ctx, "Sarah is the sister of Emma")
	found, _ := facts.Search(ctx, "work", 1)
	fmt.Println(found)
	// Output: [Paul works at Google]
}

func ExampleDocuments() {
	ctx := context.Background()
	docs, _ := store.OpenDocuments(nil) // in memory; DocumentsOptions.Dir for a directory
	defer docs.Close()
	docs.Write(ctx, "/preferences.md", "Use concise responses.")
	content, _ := docs.Read(ctx, "/preferences.md")
	fmt.Println(content)
	docs.Edit(ctx, "/preferences.md", "concise", "detailed")
	found, _ := docs.SearchFullText(ctx, "detailed", 10)
	fmt.Printf("%+v\n", found)
	// Output:
	// Use concise responses.
	// [{Path:/preferences.md Content:Use detailed responses.}]
}
