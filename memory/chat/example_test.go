package chat_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/window"
)

func ExampleListMemory() {
	ctx := context.Background()
	memory := chat.NewListMemory("chat_history")
	memory.Add(ctx, chat.Content{Content: "User prefers formal language", MimeType: chat.TextPlain})
	mc := &chat.BufferedContext{Size: 10}
	memory.UpdateContext(ctx, mc)
	msgs, _ := mc.Messages(ctx)
	fmt.Printf("%s: %q\n", msgs[0].Role, msgs[0].Content)
	// Output: system: "\nRelevant memory content (in chronological order):\n1. User prefers formal language\n"
}

func ExampleVectorMemory() {
	ctx := context.Background()
	memory, _ := chat.OpenVector("", &chat.VectorOptions{K: 1}) // in memory, offline embedder
	defer memory.Close()
	memory.Add(ctx, chat.Content{Content: "The capital of France is Paris", MimeType: chat.TextPlain})
	memory.Add(ctx, chat.Content{Content: "The user's dog is called Rex", MimeType: chat.TextPlain})
	mc := &chat.BufferedContext{}
	mc.AddMessage(ctx, chat.Message{Role: "user", Content: "What is my dog called?"})
	memory.UpdateContext(ctx, mc)
	msgs, _ := mc.Messages(ctx)
	fmt.Printf("%q\n", msgs[1].Content)
	// Output: "\nRelevant memory content:\n1. The user's dog is called Rex"
}

// ExampleNewVector keeps the chat memory in a database the agent owns,
// beside its conversation window, and keeps only scores of 0.6 or more.
func ExampleNewVector() {
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true}) // engine.Open(dir, nil) on disk
	if err != nil {
		panic(err)
	}
	defer db.Close()
	memory, _ := chat.NewVector(context.Background(), db.Store(), &chat.VectorOptions{Threshold: new(float32(0.6))})
	defer memory.Close() // leaves db open
	conv, _ := window.NewStored(context.Background(), db.Store(), "session-1", 1000, nil)
	defer conv.Close()

	memory.Add(ctx, chat.Content{Content: "The user's dog is called Rex", MimeType: chat.TextPlain})
	memory.Add(ctx, chat.Content{Content: "The capital of France is Paris", MimeType: chat.TextPlain})
	conv.Record(ctx, window.Message{Role: window.User, Content: "What is my dog called?"})
	res, _ := memory.Query(ctx, "What is my dog called?")
	for _, r := range res.Results {
		fmt.Printf("%.2f %s\n", r.Metadata["score"], r.Content)
	}
	fmt.Println(db.Collections())
	// Output:
	// 0.85 The user's dog is called Rex
	// [memory_store session-1.messages]
}

// The defaults are the original's names, and non-string contents render
// as the package doc's table says.
func ExampleNewListMemory() {
	ctx := context.Background()
	memory := chat.NewListMemory("")
	fmt.Println(memory.Name)
	memory.Add(ctx, chat.Content{Content: map[string]any{"tone": "formal", "lang": "fr"}, MimeType: chat.JSON})
	mc := &chat.BufferedContext{}
	memory.UpdateContext(ctx, mc)
	msgs, _ := mc.Messages(ctx)
	fmt.Printf("%q\n", msgs[0].Content)
	vector, _ := chat.OpenVector("", nil)
	defer vector.Close()
	fmt.Println(vector.Name())
	// Output:
	// default_list_memory
	// "\nRelevant memory content (in chronological order):\n1. {\"lang\":\"fr\",\"tone\":\"formal\"}\n"
	// memory_store
}
