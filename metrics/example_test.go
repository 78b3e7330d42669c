package metrics_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/metrics"
)

// A Func counts the records written to each collection.
func Example() {
	var mu sync.Mutex
	written := map[string]int{}
	rec := metrics.Func(func(e metrics.Event) {
		if e.Op == metrics.OpUpsert && e.Err == nil {
			mu.Lock()
			written[e.Collection] += e.Records
			mu.Unlock()
		}
	})
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
	if _, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 0}}, mnemo.Record{Vector: []float32{0, 1}}); err != nil {
		panic(err)
	}
	mu.Lock()
	fmt.Println("records written to notes:", written["notes"])
	mu.Unlock()
	// Output: records written to notes: 2
}
