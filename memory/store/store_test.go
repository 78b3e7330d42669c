package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

var ctx = context.Background()

func TestSemantic(t *testing.T) {
	s, err := OpenSemantic("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, f := range []string{"Paul works at Google", "Paul is married to Sarah", "Sarah is the sister of Emma", "Paul works at Google"} {
		if err := s.Store(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Search(ctx, "work", 0)
	if err != nil || len(got) != 4 || got[0] != "Paul works at Google" || got[1] != "Paul works at Google" {
		t.Fatalf("Search(work) = %q, %v", got, err)
	}
	if got, _ := s.Search(ctx, "work", 1); len(got) != 1 {
		t.Fatalf("n=1 returned %d", len(got))
	}
	near, _ := s.SearchWithin(ctx, "Paul works at Google", 10, 0.01)
	if len(near) != 2 {
		t.Fatalf("max distance 0.01 kept %q", near)
	}
	if err := s.Delete(ctx, "Paul works at Google"); err != nil {
		t.Fatal(err)
	}
	all, _ := s.ListAll(ctx)
	if !reflect.DeepEqual(all, []string{"Paul is married to Sarah", "Sarah is the sister of Emma"}) {
		t.Fatalf("ListAll after delete = %q (want insertion order)", all)
	}
	if err := s.Delete(ctx, "never stored"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "   ", "\xff"} {
		if err := s.Store(ctx, bad); !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrInvalid) {
			t.Errorf("Store(%q) = %v", bad, err)
		}
	}
	if _, err := s.SearchWithin(ctx, "x", 1, 3); !errors.Is(err, ErrInvalid) {
		t.Errorf("distance 3: %v", err)
	}
	for _, d := range []float32{-0.5, 2.5, float32(math.NaN())} {
		if _, err := OpenSemantic("", &SemanticOptions{MaxDistance: new(d)}); !errors.Is(err, ErrInvalid) {
			t.Errorf("MaxDistance %v: %v", d, err)
		}
	}
}

// TestSemanticMaxDistanceBoundary checks that a fact exactly at the
// cutoff is kept and one just nearer than the next is not.
func TestSemanticMaxDistanceBoundary(t *testing.T) {
	s, _ := OpenSemantic("", nil)
	defer s.Close()
	s.Store(ctx, "Paul works at Google")
	s.Store(ctx, "Sarah is the sister of Emma")
	hits, err := s.SearchHits(ctx, "Paul works", 2)
	if err != nil || len(hits) != 2 {
		t.Fatalf("SearchHits = %+v, %v", hits, err)
	}
	d := hits[0].Distance
	at, _ := OpenSemantic("", &SemanticOptions{MaxDistance: new(d)})
	defer at.Close()
	at.Store(ctx, "Paul works at Google")
	at.Store(ctx, "Sarah is the sister of Emma")
	if got, _ := at.Search(ctx, "Paul works", 2); len(got) != 1 || got[0] != "Paul works at Google" {
		t.Fatalf("MaxDistance %v (the nearest fact's own distance) kept %q", d, got)
	}
}

// TestSemanticSearchHits stores the same fact twice and with metadata:
// SearchHits tells the copies apart by ID and returns distance and
// metadata; Search keeps returning the texts.
func TestSemanticSearchHits(t *testing.T) {
	s, _ := OpenSemantic("", nil)
	defer s.Close()
	first, err := s.Add(ctx, "Paul works at Google", map[string]any{"source": "chat", "turn": 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Store(ctx, "Paul works at Google"); err != nil {
		t.Fatal(err)
	}
	s.Store(ctx, "Sarah is the sister of Emma")
	hits, err := s.SearchHits(ctx, "Paul works at Google", 3)
	if err != nil || len(hits) != 3 {
		t.Fatalf("SearchHits = %+v, %v", hits, err)
	}
	if hits[0].Text != hits[1].Text || hits[0].ID == hits[1].ID || hits[0].ID == "" {
		t.Fatalf("duplicates not told apart: %+v", hits[:2])
	}
	if hits[0].Distance > 1e-5 || hits[2].Distance <= hits[0].Distance {
		t.Fatalf("distances %v %v %v", hits[0].Distance, hits[1].Distance, hits[2].Distance)
	}
	var withMeta *Hit
	for i := range hits[:2] {
		if hits[i].ID == first {
			withMeta = &hits[i]
		}
	}
	if withMeta == nil || withMeta.Metadata["source"] != "chat" || withMeta.Metadata["turn"] != 3.0 {
		t.Fatalf("the hit with metadata: %+v", withMeta)
	}
	if got, _ := s.Search(ctx, "Paul works at Google", 3); len(got) != 3 || got[0] != "Paul works at Google" {
		t.Fatalf("Search = %q", got)
	}
	if _, err := s.Add(ctx, "bad metadata", map[string]any{"x": math.NaN()}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NaN metadata: %v", err)
	}
}

func TestSemanticPersistence(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSemantic(dir, &SemanticOptions{Collection: "facts", MaxDistance: new(float32(1.5))})
	if err != nil {
		t.Fatal(err)
	}
	s.Store(ctx, "the office wifi password is on the fridge")
	s.Close()
	s, err = OpenSemantic(dir, &SemanticOptions{Collection: "facts"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Search(ctx, "wifi password", 3)
	s.Close()
	if len(got) != 1 {
		t.Fatalf("after reopen: %q", got)
	}
	other, _ := embed.NewHashing(64)
	if _, err := OpenSemantic(dir, &SemanticOptions{Collection: "facts", Embedder: other}); !errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("another embedder: %v", err)
	}
}

// TestNewSemanticSharesDB builds a store on a database the caller owns:
// Close leaves the database open, and another store on it sees the facts.
func TestNewSemanticSharesDB(t *testing.T) {
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := NewSemantic(context.Background(), db.Store(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Store(ctx, "Paul works at Google")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = NewSemantic(context.Background(), db.Store(), nil)
	if err != nil {
		t.Fatalf("NewSemantic after Close: %v (the database was closed?)", err)
	}
	defer s.Close()
	if got, err := s.ListAll(ctx); err != nil || len(got) != 1 {
		t.Fatalf("on the shared database: %q, %v", got, err)
	}
	if _, err := NewSemantic(context.Background(), nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NewSemantic(nil) = %v, want ErrInvalid", err)
	}
}

func openDocs(t *testing.T, dir string) *Documents {
	t.Helper()
	d, err := OpenDocuments(dir, &DocumentsOptions{MaxSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDocuments(t *testing.T) {
	for _, mode := range []string{"memory", "dir"} {
		t.Run(mode, func(t *testing.T) {
			dir := ""
			if mode == "dir" {
				dir = t.TempDir()
			}
			d := openDocs(t, dir)
			if err := d.Write(ctx, "/preferences.md", "Use concise responses."); err != nil {
				t.Fatal(err)
			}
			if c, err := d.Read(ctx, "preferences.md"); err != nil || c != "Use concise responses." {
				t.Fatalf("Read = %q, %v", c, err)
			}
			if err := d.Edit(ctx, "/preferences.md", "concise", "detailed"); err != nil {
				t.Fatal(err)
			}
			got, _ := d.SearchFullText(ctx, "DETAILED", 0)
			if !reflect.DeepEqual(got, []Document{{"/preferences.md", "Use detailed responses."}}) {
				t.Fatalf("SearchFullText = %v", got)
			}
			d.Write(ctx, "/notes/a.md", "a a")
			if err := d.Edit(ctx, "/notes/a.md", "a", "b"); !errors.Is(err, ErrAmbiguous) {
				t.Fatalf("two matches: %v", err)
			}
			if err := d.Edit(ctx, "/notes/a.md", "zzz", "b"); !errors.Is(err, ErrNoMatch) {
				t.Fatalf("no match: %v", err)
			}
			if c, _ := d.Read(ctx, "/notes/a.md"); c != "a a" {
				t.Fatalf("a failed edit changed the file to %q", c)
			}
			if _, err := d.Read(ctx, "/missing.md"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing: %v", err)
			}
			if err := d.Write(ctx, "/big.md", strings.Repeat("x", 1001)); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("too large: %v", err)
			}
			d.Store(ctx, "stored note")
			paths, _ := d.ListAll(ctx)
			if len(paths) != 3 || !strings.HasPrefix(paths[0], "/note-") || paths[1] != "/notes/a.md" || paths[2] != "/preferences.md" {
				t.Fatalf("ListAll = %v", paths)
			}
			if p, _ := d.ListPaths(ctx, "notes"); !reflect.DeepEqual(p, []string{"/notes/a.md"}) {
				t.Fatalf("ListPaths(notes) = %v", p)
			}
			if s, _ := d.Search(ctx, "stored", 5); !reflect.DeepEqual(s, []string{"stored note"}) {
				t.Fatalf("Search = %v", s)
			}
			if err := d.Delete(ctx, "notes/a.md"); err != nil {
				t.Fatal(err)
			}
			if err := d.Delete(ctx, "/notes/a.md"); err != nil {
				t.Fatalf("deleting an absent document: %v", err)
			}
		})
	}
}

func TestPathAttacks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.md"))
	os.Symlink(outside, filepath.Join(dir, "linkdir"))
	d := openDocs(t, dir)
	attacks := []string{
		"", "/", "..", "../x.md", "/a/../../x.md", "a/..", "%2e%2e/x.md", "%2E%2e%2fx.md", "a%2fb", "..\\x.md",
		"a\\b.md", "x\x00.md", "C:\\x.md", "c:/x.md", "//server/share/x.md", "/.hidden.md", "/a/.git/config", "\xff.md",
		strings.Repeat("a/", 600),
	}
	for _, p := range attacks {
		for name, op := range map[string]func() error{
			"write":  func() error { return d.Write(ctx, p, "x") },
			"read":   func() error { _, err := d.Read(ctx, p); return err },
			"edit":   func() error { return d.Edit(ctx, p, "x", "y") },
			"delete": func() error { return d.Delete(ctx, p) },
		} {
			err := op()
			if !errors.Is(err, ErrBadPath) {
				t.Errorf("%s(%q) = %v, want ErrBadPath", name, p, err)
			}
			if err != nil && (strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), outside)) {
				t.Errorf("%s(%q) leaks a host path: %v", name, p, err)
			}
		}
	}
	// Symlinks that lead out of the root are never followed.
	for _, p := range []string{"/link.md", "/linkdir/secret.txt"} {
		c, err := d.Read(ctx, p)
		if err == nil || c == "secret" {
			t.Errorf("Read(%q) = %q, %v: escaped the root", p, c, err)
		}
		if err != nil && strings.Contains(err.Error(), outside) {
			t.Errorf("Read(%q) leaks a host path: %v", p, err)
		}
		if err := d.Write(ctx, p, "overwrite"); err == nil {
			if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
				t.Errorf("Write(%q) changed a file outside the root", p)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Fatal("a file outside the root was changed")
	}
}

func TestDirectoryIsTheSourceOfTruth(t *testing.T) {
	dir := t.TempDir()
	d := openDocs(t, dir)
	os.WriteFile(filepath.Join(dir, "by-hand.md"), []byte("copied in by hand"), 0o644)
	os.WriteFile(filepath.Join(dir, "report.pdf"), []byte{0x25, 0x50, 0xff, 0xfe, 0x00}, 0o644)
	os.WriteFile(filepath.Join(dir, ".DS_Store"), []byte{0xff}, 0o644)
	paths, _ := d.ListAll(ctx)
	if !reflect.DeepEqual(paths, []string{"/by-hand.md"}) {
		t.Fatalf("ListAll = %v", paths)
	}
	bad, _ := d.UnreadablePaths(ctx)
	if !reflect.DeepEqual(bad, []string{"/report.pdf"}) {
		t.Fatalf("UnreadablePaths = %v", bad)
	}
	if c, err := d.Read(ctx, "by-hand.md"); err != nil || c != "copied in by hand" {
		t.Fatalf("Read = %q, %v", c, err)
	}
	if _, err := d.Read(ctx, "report.pdf"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("reading a binary file: %v", err)
	}
	d.Write(ctx, "/sub/dir/new.md", "written")
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "dir", "new.md")); err != nil || string(b) != "written" {
		t.Fatalf("file on disk: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub", "dir"))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestConcurrentStores(t *testing.T) {
	s, _ := OpenSemantic("", nil)
	defer s.Close()
	// Documents in a directory read without a lock, in memory under one;
	// both run the same operations under the race detector.
	var docs []*Documents
	for _, dir := range []string{t.TempDir(), ""} {
		d, err := OpenDocuments(dir, &DocumentsOptions{Semantic: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		d.Write(ctx, "/counter.md", "n=0")
		docs = append(docs, d)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				fact := fmt.Sprintf("worker %d remembers fact %d", w, i)
				s.Store(ctx, fact)
				s.Search(ctx, fact, 3)
				if i%5 == 0 {
					s.Delete(ctx, fact)
				}
				for _, d := range docs {
					p := fmt.Sprintf("/w%d/%d.md", w, i)
					d.Write(ctx, p, fact)
					d.Edit(ctx, p, "remembers", "recalls")
					d.Read(ctx, p)
					d.SearchFullText(ctx, "fact", 5)
					d.SearchSemantic(ctx, fact, 3)
					d.ListAll(ctx)
				}
			}
		}(w)
	}
	wg.Wait()
	all, _ := s.ListAll(ctx)
	if len(all) != 4*16 {
		t.Fatalf("%d facts", len(all))
	}
	for _, d := range docs {
		paths, _ := d.ListPaths(ctx, "/w")
		edited, _ := d.SearchFullText(ctx, "recalls", 100)
		if len(paths) != 80 || len(edited) != 80 {
			t.Fatalf("%d documents, %d edited", len(paths), len(edited))
		}
	}
}

func TestDocumentsSemanticSearch(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDocuments(dir, &DocumentsOptions{Semantic: true})
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
	d, err := OpenDocuments("", &DocumentsOptions{Semantic: true, Embedder: emb})
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
	d, err := OpenDocuments("", &DocumentsOptions{Semantic: true})
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
