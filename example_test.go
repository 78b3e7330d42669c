package mnemo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/toolmem"
)

// The adapters take a mnemo.Store: the embedded engine here; a
// postgres.Store (postgres.Open(ctx, "postgres://...", nil)) shares the
// same memory between processes on several machines, with no other
// change.
func Example() {
	ctx := context.Background()
	s, err := engine.OpenStore("", &engine.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	mem, err := toolmem.New(ctx, s, nil)
	if err != nil {
		panic(err)
	}
	if _, err := mem.Store(ctx, toolmem.Entry{Question: "What is the weather in Paris?", ToolName: "get_weather",
		ToolArgs: map[string]any{"city": "Paris"}}); err != nil {
		panic(err)
	}
	found, err := mem.Retrieve(ctx, "weather in Paris", nil)
	if err != nil {
		panic(err)
	}
	for _, e := range found {
		fmt.Println(e.ToolName, e.ToolArgs["city"])
	}
	names, _ := s.Collections(ctx)
	fmt.Println(names)
	// Output:
	// get_weather Paris
	// [toolmem.texts toolmem.tools]
}

// A collection of any backend: records, a filter, a hybrid query.
func ExampleCollection() {
	ctx := context.Background()
	s, err := engine.OpenStore("", &engine.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		panic(err)
	}
	_, err = c.Upsert(ctx,
		mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "Paul works at Google", Metadata: map[string]any{"year": 2024}},
		mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "Anna bakes bread", Metadata: map[string]any{"year": 2020}},
	)
	if err != nil {
		panic(err)
	}
	f, _ := mnemo.ParseFilter(`{"year": {"$gte": 2021}}`)
	hits, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 0.1}, Text: "where does Paul work", Filter: f})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %q vector rank %d, text rank %d\n", h.Record.ID, h.Record.Content, h.VectorRank, h.TextRank)
	}
	// Output:
	// a "Paul works at Google" vector rank 1, text rank 1
}

// A filter is parsed once and matched against any record's metadata; a
// backend on a server translates its tree instead.
func ExampleParseFilter() {
	f, err := mnemo.ParseFilter(`{"source": "chat", "year": {"$gte": 2020}}`)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Match(map[string]any{"source": "chat", "year": 2026}))
	fmt.Println(f.Match(map[string]any{"source": "chat", "year": 2019}))
	tree, _ := f.Tree()
	for _, n := range tree.Children {
		fmt.Println(n.Field, n.Op, n.Value)
	}
	_, err = mnemo.ParseFilter(`{"year": {"$near": 2020}}`)
	fmt.Println(errors.Is(err, mnemo.ErrBadFilter))
	// Output:
	// true
	// false
	// source $eq chat
	// year $gte 2020
	// true
}

// Every backend refuses the same records with the same sentinel errors.
func ExampleCheckRecord() {
	cfg := mnemo.CollectionConfig{Dimension: 3}
	for _, r := range []mnemo.Record{
		{ID: "a", Vector: []float32{1, 0, 0}},
		{ID: "b", Vector: []float32{1, 0}},
		{ID: "c", Vector: []float32{0, 0, 0}},
		{ID: "d", Vector: []float32{1, 0, 0}, Metadata: map[string]any{"bad": "\xff"}},
	} {
		_, err := mnemo.CheckRecord(cfg, 0, r)
		switch {
		case err == nil:
			fmt.Println(r.ID, "ok")
		case errors.Is(err, mnemo.ErrDimension):
			fmt.Println(r.ID, "wrong dimension")
		case errors.Is(err, mnemo.ErrZeroVector):
			fmt.Println(r.ID, "zero vector under cosine")
		case errors.Is(err, mnemo.ErrInvalidRecord):
			fmt.Println(r.ID, "invalid record")
		}
	}
	// Output:
	// a ok
	// b wrong dimension
	// c zero vector under cosine
	// d invalid record
}
