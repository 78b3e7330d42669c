package vectorstore_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/vectorstore"
)

func Example() {
	ctx := context.Background()
	db, _ := engine.OpenStore("", &engine.Options{InMemory: true}) // or postgres.Open(ctx, dsn, nil)
	defer db.Close()

	s, _ := vectorstore.New(ctx, db, nil) // the offline hashing embedder
	s.Add(ctx, []vectorstore.Doc{
		{Text: "Paul works at Google", Metadata: map[string]any{"source": "chat"}},
		{Text: "Paul was born in Lyon", Metadata: map[string]any{"source": "profile"}},
		{Text: "The weather is rainy", Metadata: map[string]any{"source": "chat"}},
	})
	chat, _ := vectorstore.FilterOf(map[string]any{"source": "chat"}) // a framework's filter
	hits, _ := s.Search(ctx, vectorstore.Search{Text: "where does Paul work?", K: 2, MinScore: new(0.2), Filter: chat})
	for _, h := range hits {
		fmt.Printf("%s (%s)\n", h.Record.Content, h.Record.Metadata["source"])
	}
	// Output:
	// Paul works at Google (chat)
}

// ExampleOpen keeps documents in a database of their own (in memory here;
// a directory keeps them on disk), under IDs the caller chooses.
func ExampleOpen() {
	ctx := context.Background()
	s, _ := vectorstore.Open("", &vectorstore.Options{Collection: "notes"})
	defer s.Close() // closes the database

	s.Add(ctx, []vectorstore.Doc{{ID: "wifi", Text: "The wifi password is on the fridge"}})
	s.Add(ctx, []vectorstore.Doc{{ID: "wifi", Text: "The wifi password changed: ask Anna"}}) // replaces it
	n, _ := s.Count(ctx)
	hits, _ := s.Search(ctx, vectorstore.Search{Text: "wifi password", K: 1})
	fmt.Println(n, hits[0].Record.ID, hits[0].Record.Content)
	// Output:
	// 1 wifi The wifi password changed: ask Anna
}

// ExampleStore_With keeps each user's documents in a collection of their
// own, as a framework's namespace does.
func ExampleStore_With() {
	ctx := context.Background()
	s, _ := vectorstore.Open("", nil)
	defer s.Close()

	s.With("alice", nil).Add(ctx, []vectorstore.Doc{{Text: "Alice likes tea"}})
	s.With("bob", nil).Add(ctx, []vectorstore.Doc{{Text: "Bob likes coffee"}})
	for _, user := range []string{"alice", "bob", "carol"} {
		hits, _ := s.With(user, nil).Search(ctx, vectorstore.Search{Text: "what does she drink?", K: 1})
		fmt.Println(user, len(hits))
	}
	// Output:
	// alice 1
	// bob 1
	// carol 0
}

// ExampleNewForeign gives mnemo another framework's embedder: its
// embedding function, with the dimension and identity mnemo records.
func ExampleNewForeign() {
	ctx := context.Background()
	// A toy embedder: how often each of four letters occurs.
	letters := func(_ context.Context, texts []string) ([][]float32, error) {
		vs := make([][]float32, len(texts))
		for i, t := range texts {
			for _, c := range "aeio" {
				vs[i] = append(vs[i], float32(strings.Count(t, string(c))))
			}
		}
		return vs, nil
	}
	e, _ := vectorstore.NewForeign(letters, nil, 4, "toy/letters/4")
	s, _ := vectorstore.Open("", &vectorstore.Options{Embedder: e, Mode: "vector"})
	defer s.Close()

	s.Add(ctx, []vectorstore.Doc{{Text: "aaaa"}, {Text: "oooo"}})
	hits, _ := s.Search(ctx, vectorstore.Search{Text: "a ha", K: 1})
	c, _ := s.Collection(ctx)
	fmt.Println(hits[0].Record.Content, c.Config().Embedder)
	// Output:
	// aaaa toy/letters/4
}
