package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/toolmem"
	"github.com/mnemodb/mnemo/postgres"
)

// An agent memory on a PostgreSQL server: every process that opens the
// same database shares it. (Not run: it needs a server; the tests run the
// same calls when MNEMO_PG_DSN names one.)
func Example() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("MNEMO_PG_DSN"), nil) // "postgres://user@host:5432/db"
	if err != nil {
		panic(err)
	}
	defer store.Close()
	mem, err := toolmem.New(ctx, store, nil) // toolmem.New(context.Background(), db.Store(), nil) on the embedded engine
	if err != nil {
		panic(err)
	}
	id, err := mem.Store(ctx, toolmem.Entry{Question: "What is the weather in Paris?", ToolName: "get_weather"})
	if err != nil {
		panic(err)
	}
	fmt.Println("stored", id)
	notes, err := store.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 3})
	if err != nil {
		panic(err)
	}
	f, _ := mnemo.ParseFilter(`{"source": "chat"}`)
	hits, err := notes.Query(ctx, mnemo.Query{Vector: []float32{1, 0, 0}, Text: "Paris", K: 5, Filter: f})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(hits))
}
