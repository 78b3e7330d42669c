package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/store"
)

func ExampleSemantic() {
	ctx := context.Background()
	facts, err := store.OpenSemantic("", nil) // in memory, offline embedder
	if err != nil {
		panic(err)
	}
	defer facts.Close()
	facts.Store(ctx, "Paul works at Google")
	facts.Store(ctx, "Paul is married to Sarah")
	facts.Store(ctx, "Sarah is the sister of Emma")
	found, _ := facts.Search(ctx, "work", 1)
	fmt.Println(found)
	// Output: [Paul works at Google]
}

func ExampleDocuments() {
	ctx := context.Background()
	docs, _ := store.OpenDocuments("", nil) // in memory; a directory path for files
	defer docs.Close()
	docs.Write(ctx, "/preferences.md", "Use concise responses.")
	content, _ := docs.Read(ctx, "/preferences.md")
	fmt.Println(content)
	docs.Edit(ctx, "/preferences.md", "concise", "detailed")
	found, _ := docs.SearchFullText(ctx, "detailed", 10)
	fmt.Printf("%+v\n", found)
	// Output:
	// Use concise responses.
	// [{Path:/preferences.md Content:Use detailed responses.}]
}

// ExampleNewSemantic keeps facts in a database the agent owns, beside its
// chat memory, and reads each hit's ID, distance and metadata.
func ExampleNewSemantic() {
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true}) // engine.Open(dir, nil) on disk
	if err != nil {
		panic(err)
	}
	defer db.Close()
	facts, _ := store.NewSemantic(context.Background(), db.Store(), &store.SemanticOptions{MaxDistance: new(float32(0.9))})
	defer facts.Close() // leaves db open
	notes, _ := chat.NewVector(context.Background(), db.Store(), nil)
	defer notes.Close()

	facts.Add(ctx, "Paul works at Google", map[string]any{"source": "onboarding"})
	facts.Store(ctx, "Paul works at Google")
	facts.Store(ctx, "Sarah is the sister of Emma")
	notes.Add(ctx, chat.Content{Content: "Paul prefers short answers", MimeType: chat.TextPlain})
	hits, _ := facts.SearchHits(ctx, "where does Paul work", 5)
	for _, h := range hits {
		fmt.Printf("%s (distance %.2f, %d-character ID) %v\n", h.Text, h.Distance, len(h.ID), h.Metadata)
	}
	// Unordered output:
	// Paul works at Google (distance 0.19, 36-character ID) map[source:onboarding]
	// Paul works at Google (distance 0.19, 36-character ID) map[]
}

// A path is a document or a folder, never both, in memory and on disk
// alike; a warning names each file in the directory that is not a
// document when the store has a logger.
func ExampleDocuments_folders() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "docs")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "scan.pdf"), []byte{0xff, 0xfe}, 0o644)
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a stable output for the example
			}
			return a
		}}))
	docs, _ := store.OpenDocuments(dir, &store.DocumentsOptions{Logger: logger})
	defer docs.Close()

	docs.Write(ctx, "/proj/plan.md", "Ship in May.")
	err := docs.Write(ctx, "/proj", "a document where a folder is")
	fmt.Println(errors.Is(err, store.ErrPathConflict))
	err = docs.Write(ctx, "/notes/", "a path ending in a slash")
	fmt.Println(errors.Is(err, store.ErrBadPath))
	paths, _ := docs.ListAll(ctx)
	fmt.Println(paths)
	// Output:
	// true
	// true
	// level=WARN msg="store: skipped a file that is not a document" path=/scan.pdf reason="not UTF-8 text"
	// [/proj/plan.md]
}
