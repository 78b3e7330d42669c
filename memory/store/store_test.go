package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"

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

// TestConcurrentSemantic stores, searches and deletes facts from several
// goroutines, under the race detector.
func TestConcurrentSemantic(t *testing.T) {
	s, _ := OpenSemantic("", nil)
	defer s.Close()
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
			}
		}(w)
	}
	wg.Wait()
	all, _ := s.ListAll(ctx)
	if len(all) != 4*16 {
		t.Fatalf("%d facts", len(all))
	}
}
