package window_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/store"
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

// ExampleNewStored keeps a session in a database the agent owns (beside
// its other memories) and resumes it after a restart.
func ExampleNewStored() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "window-example-")
	defer os.RemoveAll(dir)

	db, _ := engine.Open(dir, nil)
	w, _ := window.NewStored(context.Background(), db.Store(), "assistant", 200, nil)
	facts, _ := store.NewSemantic(context.Background(), db.Store(), nil) // the same database
	facts.Store(ctx, "The launch is on May 3")
	w.RecordProtected(ctx, window.Message{Role: window.System, Content: "You are terse."})
	w.Record(ctx, window.Message{Role: window.User, Content: "Remember: the launch is on May 3."})
	w.Close()  // leaves db open
	db.Close() // the agent restarts

	db, _ = engine.Open(dir, nil)
	defer db.Close()
	w, _ = window.NewStored(context.Background(), db.Store(), "assistant", 200, nil)
	msgs, _ := w.Context(ctx)
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	fmt.Println(w.Len(), db.Collections())
	// Output:
	// system: You are terse.
	// user: Remember: the launch is on May 3.
	// 2 [assistant.messages memories]
}

// ExampleWindow_SetMessages replaces a long history with a summary,
// keeping the system prompt protected.
func ExampleWindow_SetMessages() {
	ctx := context.Background()
	w, _ := window.New(100, nil)
	w.RecordProtected(ctx, window.Message{Role: window.System, Content: "Answer in French."})
	w.Record(ctx, window.Message{Role: window.User, Content: "What is the capital of Italy?"})
	w.Record(ctx, window.Message{Role: window.Assistant, Content: "Rome."})
	hist, _ := w.History(ctx)
	w.SetMessages(ctx, []window.Message{hist[0], {Role: window.User, Content: "(We discussed Italy.)"}})
	msgs, _ := w.History(ctx)
	for _, m := range msgs {
		fmt.Printf("%s: %s (protected %v)\n", m.Role, m.Content, m.Protected)
	}
	// Output:
	// system: Answer in French. (protected true)
	// user: (We discussed Italy.) (protected false)
}

func ExampleOptions_recall() {
	ctx := context.Background()
	w, _ := window.New(40, &window.Options{Recall: true, RecallShare: 0.5})
	defer w.Close()
	w.Record(ctx, window.Message{Role: window.User, Content: "My locker code is 4711."})
	for i := 0; i < 5; i++ {
		w.Record(ctx, window.Message{Role: window.User, Content: fmt.Sprintf("Tell me a fun fact number %d.", i)})
	}
	w.Record(ctx, window.Message{Role: window.User, Content: "What is my locker code?"})
	msgs, _ := w.Context(ctx)
	fmt.Printf("%s: %q\n", msgs[0].Role, msgs[0].Content)
	// Output: system: "Recalled from earlier in this conversation:\n\nuser: My locker code is 4711."
}

// A tool call and its result travel together: while a call waits for its
// result, the window takes nothing else, so no context can hold a result
// without its call.
func Example_toolCalls() {
	ctx := context.Background()
	w, _ := window.New(1000, nil)
	w.Record(ctx, window.Message{Role: window.User, Content: "Weather in Lisbon?"})
	w.Record(ctx, window.Message{Role: window.Assistant, ToolCalls: []window.ToolCall{
		{ID: "c1", Name: "weather", Arguments: `{"city":"Lisbon"}`}}})

	err := w.Record(ctx, window.Message{Role: window.User, Content: "Hello?"})
	fmt.Println(errors.Is(err, window.ErrUnansweredToolCalls))

	w.Record(ctx, window.Message{Role: window.Tool, Content: "21°C, sunny", ToolCallID: "c1"})
	err = w.Record(ctx, window.Message{Role: window.User, Content: "Thanks!"})
	fmt.Println(err)
	// Output:
	// true
	// <nil>
}

// ExampleSearchStored searches a stored session by its words while the
// window that records it has it open, as another process could (an MCP
// server on the same PostgreSQL database, say).
func ExampleSearchStored() {
	ctx := context.Background()
	db, _ := engine.Open("", &engine.Options{InMemory: true})
	defer db.Close()
	w, _ := window.NewStored(ctx, db.Store(), "support", 200, nil)
	defer w.Close()
	w.Record(ctx, window.Message{Role: window.User, Content: "My order 1182 arrived damaged."})
	w.Record(ctx, window.Message{Role: window.Assistant, Content: "Sorry! A replacement for order 1182 ships today."})
	w.Record(ctx, window.Message{Role: window.User, Content: "Thanks. Also, can I change my email?"})

	sessions, _ := window.Sessions(ctx, db.Store())
	fmt.Println(sessions)
	found, _ := window.SearchStored(ctx, db.Store(), "support", "replacement order", 1)
	for _, f := range found {
		fmt.Printf("#%d %s: %s\n", f.Index, f.Message.Role, f.Message.Content)
	}
	msgs, total, _ := window.ReadStored(ctx, db.Store(), "support", 2, 10)
	fmt.Println(total, msgs[0].Message.Content)
	// Output:
	// [support]
	// #1 assistant: Sorry! A replacement for order 1182 ships today.
	// 3 Thanks. Also, can I change my email?
}
