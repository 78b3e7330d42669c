package chat_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/memory/chat"
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
