package toolmem_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
)

func Example() {
	ctx := context.Background()
	mem, err := toolmem.Open("", nil) // in memory, offline embedder
	if err != nil {
		panic(err)
	}
	defer mem.Close()
	mem.Store(ctx, toolmem.Entry{
		Question:      "What is the weather in Paris today?",
		ToolName:      "get_weather",
		ToolArgs:      map[string]any{"city": "Paris"},
		ResultSummary: toolmem.Summarize("18°C, light rain, wind 12 km/h"),
	})
	mem.Store(ctx, toolmem.Entry{
		Question: "Convert 100 US dollars to euros",
		ToolName: "convert_currency",
		ToolArgs: map[string]any{"from": "USD", "to": "EUR", "amount": 100},
	})
	hits, err := mem.Retrieve(ctx, "what's the weather like in Paris", nil) // top 3, similarity >= 0.6
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Println(h.ToolName, h.ToolArgs["city"])
	}
	// Output: get_weather Paris
}

// ExampleNew keeps the tool memory in a database the agent owns, beside
// its other memories, and sets the similarity threshold for one call.
func ExampleNew() {
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true}) // engine.Open(dir, nil) on disk
	if err != nil {
		panic(err)
	}
	defer db.Close()
	tools, _ := toolmem.New(context.Background(), db.Store(), nil)
	defer tools.Close() // leaves db open
	facts, _ := store.NewSemantic(context.Background(), db.Store(), nil)
	defer facts.Close()

	tools.Store(ctx, toolmem.Entry{Question: "What is the weather in Paris today?", ToolName: "get_weather"})
	facts.Store(ctx, "The user lives in Paris")
	hits, _ := tools.Retrieve(ctx, "weather in Paris", &toolmem.Search{Threshold: new(float32(0.3))})
	for _, h := range hits {
		fmt.Println(h.ToolName)
	}
	fmt.Println(db.Collections())
	// Output:
	// get_weather
	// [memories toolmem.texts toolmem.tools]
}

// Tool arguments come back exactly as they were stored: numbers as
// json.Number, or typed through DecodeArgs.
func ExampleEntry_DecodeArgs() {
	ctx := context.Background()
	mem, _ := toolmem.Open("", nil)
	defer mem.Close()
	mem.Store(ctx, toolmem.Entry{
		Question: "Show order 9007199254740993",
		ToolName: "get_order",
		ToolArgs: map[string]any{"id": int64(9007199254740993), "lines": 5},
	})
	hits, _ := mem.Retrieve(ctx, "show order 9007199254740993", nil)
	fmt.Println(hits[0].ToolArgs["id"], hits[0].ToolArgs["lines"])

	var args struct {
		ID    int64
		Lines int
	}
	if err := hits[0].DecodeArgs(&args); err != nil {
		panic(err)
	}
	fmt.Println(args.ID, args.Lines)
	// Output:
	// 9007199254740993 5
	// 9007199254740993 5
}
