package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

func Example() {
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	notes, err := db.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 3})
	if err != nil {
		panic(err)
	}
	_, err = notes.Upsert(ctx,
		mnemo.Record{ID: "n1", Vector: []float32{1, 0, 0}, Content: "the cat sat", Metadata: map[string]any{"topic": "pets"}},
		mnemo.Record{ID: "n2", Vector: []float32{0.9, 0.1, 0}, Content: "dogs bark", Metadata: map[string]any{"topic": "pets"}},
		mnemo.Record{ID: "n3", Vector: []float32{0, 0, 1}, Content: "tax rules", Metadata: map[string]any{"topic": "money"}},
	)
	if err != nil {
		panic(err)
	}
	hits, err := notes.Query(ctx, mnemo.Query{Vector: []float32{1, 0, 0}, K: 2})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %q similarity %.3f\n", h.Record.ID, h.Record.Content, h.Similarity)
	}
	// Output:
	// n1 "the cat sat" similarity 1.000
	// n2 "dogs bark" similarity 0.994
}

func ExampleCollection_Query_filter() {
	ctx := context.Background()
	db, _ := engine.Open("", &engine.Options{InMemory: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "docs", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2})
	for i, year := range []int{2018, 2020, 2022, 2024} {
		c.Upsert(ctx, mnemo.Record{
			ID:       fmt.Sprint("doc", i),
			Vector:   []float32{float32(i), 0},
			Metadata: map[string]any{"year": year, "lang": []string{"en", "fr"}[i%2]},
		})
	}
	f, err := mnemo.ParseFilter(`{"$and": [{"year": {"$gte": 2020}}, {"lang": {"$in": ["en"]}}]}`)
	if err != nil {
		panic(err)
	}
	hits, _ := c.Query(ctx, mnemo.Query{Vector: []float32{0, 0}, K: 5, Filter: f})
	for _, h := range hits {
		fmt.Println(h.Record.ID, h.Record.Metadata["year"], h.Distance)
	}
	_, err = mnemo.ParseFilter(`{"year": {"$gt": 2020, "$lt": 2024}}`)
	fmt.Println(err)
	// Output:
	// doc2 2022 4
	// mnemo: bad filter: filter.year: want exactly one operator, got 2
}

func ExampleOpen_reopen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "mnemo-example-")
	defer os.RemoveAll(dir)

	db, _ := engine.Open(dir, nil)
	c, _ := db.CreateCollection(ctx, "memories", mnemo.CollectionConfig{Dimension: 2})
	c.Upsert(ctx, mnemo.Record{ID: "m1", Vector: []float32{1, 1}, Content: "remember the milk"})
	db.Close() // checkpoints the index

	db, _ = engine.Open(dir, nil) // no config needed again
	defer db.Close()
	c, _ = db.Collection("memories")
	r, ok, _ := c.Get(ctx, "m1")
	st, _ := c.Stats(ctx)
	fmt.Println(ok, r.Content, c.Config().Dimension, st.OpenedBy)
	// Output: true remember the milk 2 checkpoint+replay
}

// A small collection answers a query without an ef exactly; a query that
// names an ef walks the graph. Quantize "sq8" walks it on 8-bit codes.
func ExampleCollection_QueryPlan() {
	ctx := context.Background()
	db, _ := engine.Open("", &engine.Options{InMemory: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2, Quantize: "sq8"})
	c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 0}}, mnemo.Record{ID: "b", Vector: []float32{0, 1}})
	_, plan, _ := c.QueryPlan(ctx, mnemo.Query{Vector: []float32{1, 0.2}, K: 1})
	fmt.Println(plan)
	hits, plan, _ := c.QueryPlan(ctx, mnemo.Query{Vector: []float32{1, 0.2}, K: 1, Ef: 32})
	fmt.Println(plan, hits[0].Record.ID)
	// Output:
	// exact
	// graph a
}

// A writer numbers what it stores from the collection's sequence, which
// every handle of the database shares; a collection's sequence starts
// unset, and its writer starts it where its own numbering leaves off.
func ExampleCollection_Reserve() {
	ctx := context.Background()
	db, _ := engine.Open("", &engine.Options{InMemory: true})
	defer db.Close()
	c, _ := db.CreateCollection(ctx, "turns", mnemo.CollectionConfig{Dimension: 2})
	if _, err := c.Reserve(ctx, 1); errors.Is(err, mnemo.ErrSequenceUnset) {
		c.Advance(ctx, 0) // nothing stored yet: start at 0
	}
	first, _ := c.Reserve(ctx, 3)
	next, _ := c.Reserve(ctx, 1)
	fmt.Println(first, next)
	// Output:
	// 0 3
}
