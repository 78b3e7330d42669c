package toolmem_test

import (
	"context"
	"fmt"

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
