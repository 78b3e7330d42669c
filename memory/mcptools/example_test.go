package mcptools_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/mcptools"
	"github.com/mnemodb/mnemo/memory/store"
)

// Example mounts the memory tools on an application's own MCP server,
// beside its own tools, on the database the application already has
// open; a client (here over an in-memory transport, in a real program
// over stdio or HTTP) then calls them, and the application reads what
// the model remembered through the fact store's Go API.
func Example() {
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	tools, err := mcptools.New(ctx, db.Store(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close() // before db.Close: it waits for calls in flight
	server := mcp.NewServer(&mcp.Implementation{Name: "my-agent", Version: "v1"}, nil)
	tools.Register(server)

	st, ct := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	client, err := mcp.NewClient(&mcp.Implementation{Name: "model", Version: "v1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "facts_remember",
		Arguments: map[string]any{"fact": "The user's cat is called Miso"}})
	if err != nil || res.IsError {
		log.Fatal(err)
	}

	facts, _ := store.NewSemantic(ctx, db.Store(), nil) // the same collection, "memories"
	found, _ := facts.Search(ctx, "what is the cat's name", 1)
	fmt.Println(found)
	// Output: [The user's cat is called Miso]
}

// ExampleTools_Register shows the document tools, which answer in text as
// Anthropic's memory tool does, and a tool error: a result the model
// reads, with IsError set, never a protocol error.
func ExampleTools_Register() {
	ctx := context.Background()
	db, _ := engine.Open("", &engine.Options{InMemory: true})
	defer db.Close()
	tools, _ := mcptools.New(ctx, db.Store(), &mcptools.Options{Prefix: "mnemo_"})
	defer tools.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "my-agent", Version: "v1"}, nil)
	tools.Register(server)
	st, ct := mcp.NewInMemoryTransports()
	server.Connect(ctx, st, nil)
	client, _ := mcp.NewClient(&mcp.Implementation{Name: "model", Version: "v1"}, nil).Connect(ctx, ct, nil)
	defer client.Close()

	call := func(name string, args map[string]any) {
		res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (error %v):\n%s\n", name, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	call("mnemo_documents_create", map[string]any{"path": "/memories/prefs.md", "file_text": "- metric units\n- short answers"})
	call("mnemo_documents_str_replace", map[string]any{"path": "/memories/prefs.md", "old_str": "short", "new_str": "detailed"})
	call("mnemo_documents_view", map[string]any{"path": "/memories/prefs.md"})
	call("mnemo_documents_view", map[string]any{"path": "/memories/../etc/passwd"})
	// Output:
	// mnemo_documents_create (error false):
	// File created successfully at: /memories/prefs.md
	// mnemo_documents_str_replace (error false):
	// The document /memories/prefs.md has been edited. Here are the edited lines and two on each side:
	//      1	- metric units
	//      2	- detailed answers
	// mnemo_documents_view (error false):
	// Here's the content of /memories/prefs.md with line numbers:
	//      1	- metric units
	//      2	- detailed answers
	// mnemo_documents_view (error true):
	// docstore: bad path: "/memories/../etc/passwd": ".." is not allowed (a path looks like /notes/todo.md: segments of letters, digits and punctuation, none starting with a dot)
}
