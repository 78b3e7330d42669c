package expvarmetrics_test

import (
	"context"
	"expvar"
	"fmt"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/metrics/expvarmetrics"
)

// A program publishes the recorder's map once (expvarmetrics.Publish
// under a top-level name, served at /debug/vars by expvar's handler);
// here a map of its own keeps the example repeatable.
func Example() {
	rec := expvarmetrics.New(new(expvar.Map))
	db, err := engine.Open("", &engine.Options{InMemory: true, Metrics: rec})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	c, err := db.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		panic(err)
	}
	for range 3 {
		if _, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 0}}, mnemo.Record{Vector: []float32{0, 1}}); err != nil {
			panic(err)
		}
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 0}, K: 1}); err != nil {
		panic(err)
	}
	m := rec.Map()
	fmt.Println("upserts:", m.Get("upserts"))
	fmt.Println("upsert_records:", m.Get("upsert_records"))
	fmt.Println("queries:", m.Get("queries"))
	fmt.Println("upsert latencies observed:", m.Get("upsert_seconds").(*expvarmetrics.Histogram).Count())
	// Output:
	// upserts: 3
	// upsert_records: 6
	// queries: {"vector/exact": 1}
	// upsert latencies observed: 3
}
