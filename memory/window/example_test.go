package window_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/memory/window"
)

func Example() {
	ctx := context.Background()
	w, _ := window.New(12, nil) // a 12-token budget, default counter
	w.RecordProtected(ctx, window.Message{Role: window.System, Content: "Answer in French."})
	w.Record(ctx, window.Message{Role: window.User, Content: "What is the capital of Italy?"})
	w.Record(ctx, window.Message{Role: window.Assistant, Content: "Rome."})
	w.Record(ctx, window.Message{Role: window.User, Content: "And of Spain?"})
	w.Record(ctx, window.Message{Role: window.Assistant, Content: "Madrid."})
	msgs, _ := w.Context(ctx)
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// system: Answer in French.
	// user: And of Spain?
	// assistant: Madrid.
}
