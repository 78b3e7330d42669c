package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/scope"
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

// ExampleNewSemantic keeps facts in a database the agent owns, beside its
// chat memory, and reads each hit's ID, distance and metadata.
func ExampleNewSemantic() {
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true}) // engine.Open(dir, nil) on disk
	if err != nil {
		panic(err)
	}
	defer db.Close()
	facts, _ := store.NewSemantic(context.Background(), db.Store(), &store.SemanticOptions{MaxDistance: new(float32(0.9))})
	defer facts.Close() // leaves db open
	notes, _ := chat.NewVector(context.Background(), db.Store(), nil)
	defer notes.Close()

	facts.Add(ctx, "Paul works at Google", map[string]any{"source": "onboarding"})
	facts.Store(ctx, "Paul works at Google")
	facts.Store(ctx, "Sarah is the sister of Emma")
	notes.Add(ctx, chat.Content{Content: "Paul prefers short answers", MimeType: chat.TextPlain})
	hits, _ := facts.SearchHits(ctx, "where does Paul work", 5)
	for _, h := range hits {
		fmt.Printf("%s (distance %.2f, %d-character ID) %v\n", h.Text, h.Distance, len(h.ID), h.Metadata)
	}
	// Unordered output:
	// Paul works at Google (distance 0.19, 36-character ID) map[source:onboarding]
	// Paul works at Google (distance 0.19, 36-character ID) map[]
}

// ExampleStore uses the fact store and the document store (package
// docstore) through the one interface: the agent's code is the same for
// both, and so is the error an empty note gets.
func ExampleStore() {
	ctx := context.Background()
	facts, err := store.OpenSemantic("", nil)
	if err != nil {
		panic(err)
	}
	defer facts.Close()
	docs, err := docstore.Open("", nil)
	if err != nil {
		panic(err)
	}
	defer docs.Close()
	for _, m := range []store.Store{facts, docs} {
		m.Store(ctx, "Paul works at Google")
		m.Store(ctx, "Sarah is the sister of Emma")
		found, _ := m.Search(ctx, "Google", 1)
		err := m.Store(ctx, "   ")
		fmt.Printf("%T: %q, empty note refused with store.ErrEmpty: %v\n", m, found, errors.Is(err, store.ErrEmpty))
	}
	// Output:
	// *store.Semantic: ["Paul works at Google"], empty note refused with store.ErrEmpty: true
	// *docstore.Store: ["Paul works at Google"], empty note refused with store.ErrEmpty: true
}

// ExampleSemantic_scopes keeps the facts of many users in one collection:
// each user's handle stores its scope with every fact and reads only its
// own; an update keeps the fact's ID and records the change.
func ExampleSemantic_scopes() {
	ctx := context.Background()
	db, err := engine.OpenStore("", &engine.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	forUser := func(user string) *store.Semantic {
		s, err := store.NewSemantic(ctx, db, &store.SemanticOptions{Scope: scope.Of("user", user)})
		if err != nil {
			panic(err)
		}
		return s
	}
	alice, bob := forUser("alice"), forUser("bob")
	defer alice.Close()
	defer bob.Close()

	id, _ := alice.Add(ctx, "Alice works at Google", map[string]any{"topic": "work"})
	bob.Add(ctx, "Bob works at a bakery", map[string]any{"topic": "work"})
	alice.Update(ctx, id, "Alice works at a lab")

	hits, _ := alice.SearchWith(ctx, "works", &store.SearchOptions{Where: map[string]any{"topic": "work"}})
	for _, h := range hits {
		fmt.Println(h.Text, h.Scope)
	}
	history, _ := alice.History(ctx, id)
	fmt.Printf("%q -> %q\n", history[0].Old, history[0].New)
	// Output:
	// Alice works at a lab user=alice
	// "Alice works at Google" -> "Alice works at a lab"
}
