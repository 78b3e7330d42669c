package docstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mnemodb/mnemo/memory/docstore"
)

// ExampleOpen keeps the documents in a directory, which is the single
// source of truth: a document written is a file there, and a file copied
// in by hand is a document at once. Open("", nil) keeps them in memory.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "docs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	docs, err := docstore.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "/travel/lisbon.md", "Flights to Lisbon are booked for March.")
	b, _ := os.ReadFile(filepath.Join(dir, "travel", "lisbon.md"))
	fmt.Printf("on disk: %s\n", b)
	os.WriteFile(filepath.Join(dir, "by-hand.md"), []byte("Copied in by hand."), 0o644)
	paths, _ := docs.ListPaths(ctx, "")
	fmt.Println(paths)
	// Output:
	// on disk: Flights to Lisbon are booked for March.
	// [/by-hand.md /travel/lisbon.md]
}

// ExampleStore_Write creates and replaces documents. "notes/a.md" and
// "/notes/a.md" are the same document; a path ending in a slash names a
// folder, and a path cannot be a document and a folder at once.
func ExampleStore_Write() {
	ctx := context.Background()
	docs, err := docstore.Open("", nil)
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "notes/a.md", "first")
	docs.Write(ctx, "/notes/a.md", "second")
	content, _ := docs.Read(ctx, "/notes/a.md")
	fmt.Println(content)
	err = docs.Write(ctx, "/notes/", "x")
	fmt.Println(errors.Is(err, docstore.ErrBadPath))
	err = docs.Write(ctx, "/notes", "a document where a folder is")
	fmt.Println(errors.Is(err, docstore.ErrPathConflict))
	// Output:
	// second
	// true
	// true
}

// ExampleStore_Read reads a document, and tells a missing one from a
// folder.
func ExampleStore_Read() {
	ctx := context.Background()
	docs, err := docstore.Open("", nil)
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "/proj/plan.md", "Ship in May.")
	content, err := docs.Read(ctx, "proj/plan.md")
	fmt.Println(content, err)
	_, err = docs.Read(ctx, "/missing.md")
	fmt.Println(errors.Is(err, docstore.ErrNotFound))
	_, err = docs.Read(ctx, "/proj")
	fmt.Println(errors.Is(err, docstore.ErrPathConflict))
	// Output:
	// Ship in May. <nil>
	// true
	// true
}

// ExampleStore_Edit replaces text that occurs exactly once; otherwise the
// document is left as it was.
func ExampleStore_Edit() {
	ctx := context.Background()
	docs, err := docstore.Open("", nil)
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "/preferences.md", "Use concise responses. Use metric units.")
	fmt.Println(docs.Edit(ctx, "/preferences.md", "concise", "detailed"))
	err = docs.Edit(ctx, "/preferences.md", "Use", "Prefer")
	fmt.Println(errors.Is(err, docstore.ErrAmbiguous))
	err = docs.Edit(ctx, "/preferences.md", "imperial", "metric")
	fmt.Println(errors.Is(err, docstore.ErrNoMatch))
	content, _ := docs.Read(ctx, "/preferences.md")
	fmt.Println(content)
	// Output:
	// <nil>
	// true
	// true
	// Use detailed responses. Use metric units.
}

// ExampleStore_SearchFullText finds the documents containing a text,
// ignoring case, in path order.
func ExampleStore_SearchFullText() {
	ctx := context.Background()
	docs, err := docstore.Open("", nil)
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "/travel/lisbon.md", "Flights to Lisbon are booked for March.")
	docs.Write(ctx, "/diet.md", "The user is vegetarian.")
	docs.Write(ctx, "/travel/porto.md", "The train to Porto leaves in March.")
	found, _ := docs.SearchFullText(ctx, "march", 10)
	for _, d := range found {
		fmt.Printf("%s: %s\n", d.Path, d.Content)
	}
	// Output:
	// /travel/lisbon.md: Flights to Lisbon are booked for March.
	// /travel/porto.md: The train to Porto leaves in March.
}

// ExampleStore_SearchSemantic searches by meaning and words together, with
// the offline embedder; embed.OpenAI or embed.Ollama (Options.Embedder)
// know meaning beyond shared words.
func ExampleStore_SearchSemantic() {
	ctx := context.Background()
	docs, err := docstore.Open("", &docstore.Options{Semantic: true})
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "/travel.md", "Flights to Lisbon are booked for March; the hotel is near the river.")
	docs.Write(ctx, "/diet.md", "The user is vegetarian and avoids peanuts.")
	found, _ := docs.SearchSemantic(ctx, "what food does the user eat", 1)
	fmt.Println(found[0].Path)
	// Output: /diet.md
}

// ExampleStore_UnreadablePaths lists the files in the directory that are
// not documents; a warning names each when the store has a logger.
func ExampleStore_UnreadablePaths() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "docs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "scan.pdf"), []byte{0xff, 0xfe}, 0o644)
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a stable output for the example
			}
			return a
		}}))
	docs, err := docstore.Open(dir, &docstore.Options{Logger: logger})
	if err != nil {
		panic(err)
	}
	defer docs.Close()

	docs.Write(ctx, "/proj/plan.md", "Ship in May.")
	paths, _ := docs.ListAll(ctx)
	fmt.Println(paths)
	bad, _ := docs.UnreadablePaths(ctx)
	fmt.Println(bad)
	// Output:
	// level=WARN msg="docstore: skipped a file that is not a document" path=/scan.pdf reason="not UTF-8 text"
	// [/proj/plan.md]
	// level=WARN msg="docstore: skipped a file that is not a document" path=/scan.pdf reason="not UTF-8 text"
	// [/scan.pdf]
}
