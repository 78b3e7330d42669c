package docstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

func TestDocumentsSemanticSearch(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, &Options{Semantic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Write(ctx, "/travel.md", "Flights to Lisbon are booked for March; the hotel is near the river.")
	d.Write(ctx, "/diet.md", "The user is vegetarian and avoids peanuts.")
	d.Write(ctx, "/blank.md", "   ")
	got, err := d.SearchSemantic(ctx, "what food does the user eat", 1)
	if err != nil || len(got) != 1 || got[0].Path != "/diet.md" {
		t.Fatalf("SearchSemantic = %+v, %v", got, err)
	}
	// A file edited by hand is searched as it is now; a removed one is gone.
	os.WriteFile(filepath.Join(dir, "diet.md"), []byte("Prefers window seats on trains."), 0o644)
	os.Remove(filepath.Join(dir, "travel.md"))
	got, _ = d.SearchSemantic(ctx, "vegetarian peanuts", 5)
	for _, g := range got {
		if g.Path == "/travel.md" || strings.Contains(g.Content, "vegetarian") {
			t.Fatalf("stale result %+v", g)
		}
	}
	if len(got) != 1 || got[0].Content != "Prefers window seats on trains." {
		t.Fatalf("after the hand edit: %+v", got)
	}
	plain := openDocs(t, "")
	if _, err := plain.SearchSemantic(ctx, "x", 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("semantic search off: %v", err)
	}
}

// cancelling is an embedder that cancels a context after embedding, so
// the index write that follows fails.
type cancelling struct {
	embed.Embedder
	cancel context.CancelFunc // nil: embed normally
}

func (c *cancelling) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := c.Embedder.Embed(ctx, texts)
	if c.cancel != nil {
		c.cancel()
	}
	return vs, err
}

// TestDocumentsSemanticIndexFailures makes the index write after an
// embedding fail, once for an update and once for a removal: the search
// reports the error, and the next search retries the write instead of
// serving the stale index.
func TestDocumentsSemanticIndexFailures(t *testing.T) {
	h, _ := embed.NewHashing(0)
	emb := &cancelling{Embedder: h}
	d, err := Open("", &Options{Semantic: true, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	failOnce := func(query string) {
		t.Helper()
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		emb.cancel = cancel
		defer func() { emb.cancel = nil }()
		if _, err := d.SearchSemantic(cctx, query, 5); !errors.Is(err, context.Canceled) {
			t.Fatalf("SearchSemantic with a failing index write = %v, want context.Canceled", err)
		}
	}
	d.Write(ctx, "/pets.md", "The user's dog is called Rex.")
	if got, _ := d.SearchSemantic(ctx, "dog", 5); len(got) != 1 {
		t.Fatalf("before: %+v", got)
	}

	// An update whose Upsert fails is re-embedded by the next search.
	d.Write(ctx, "/pets.md", "The user's cat is called Tom.")
	failOnce("cat")
	got, err := d.SearchSemantic(ctx, "cat called Tom", 5)
	if err != nil || len(got) != 1 {
		t.Fatalf("after the failed update: %+v, %v", got, err)
	}
	if hits, _ := d.index.c.Query(ctx, mnemo.Query{Vector: mustVector(t, h, "cat called Tom"), K: 1}); len(hits) != 1 || hits[0].Distance > 0.5 {
		t.Fatalf("the index kept the old embedding: %+v", hits)
	}

	// A document emptied of text whose Delete fails is removed by the
	// next search.
	d.Write(ctx, "/pets.md", " \n ")
	failOnce("cat")
	if got, err := d.SearchSemantic(ctx, "cat called Tom", 5); err != nil || len(got) != 0 {
		t.Fatalf("after the failed delete: %+v, %v", got, err)
	}
}

func mustVector(t *testing.T, e embed.Embedder, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// TestDocumentsSemanticLongPath indexes a document whose path is longer
// than a record ID may be.
func TestDocumentsSemanticLongPath(t *testing.T) {
	d, err := Open("", &Options{Semantic: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	long := "/" + strings.Repeat("deep/", 140) + "notes.md"
	if len(long) <= mnemo.MaxIDLength {
		t.Fatalf("path of %d bytes is not long enough", len(long))
	}
	if err := d.Write(ctx, long, "The user's dog is called Rex."); err != nil {
		t.Fatal(err)
	}
	d.Write(ctx, "/other.md", "Flights to Lisbon in March.")
	got, err := d.SearchSemantic(ctx, "dog", 1)
	if err != nil || len(got) != 1 || got[0].Path != long {
		t.Fatalf("SearchSemantic = %+v, %v", got, err)
	}
}
