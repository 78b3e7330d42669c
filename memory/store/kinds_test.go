package store

import (
	"errors"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/toolmem"
	"github.com/mnemodb/mnemo/memory/window"
)

// TestCollectionKindsAcrossAdapters: memories that pick one another's
// collection names are refused with mnemo.ErrCollectionKind, and the
// memory that was there first keeps its contents.
func TestCollectionKindsAcrossAdapters(t *testing.T) {
	s := memtest.Store(t)
	tools, err := toolmem.New(ctx, s, &toolmem.Options{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Store(ctx, toolmem.Entry{Question: "weather in Paris", ToolName: "get_weather"}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSemantic(ctx, s, &SemanticOptions{Collection: "agent.tools"}); !errors.Is(err, mnemo.ErrCollectionKind) {
		t.Errorf("a fact store over the tool memory's tools: %v, want ErrCollectionKind", err)
	}
	if _, err := chat.NewVector(ctx, s, &chat.VectorOptions{Collection: "agent.texts"}); !errors.Is(err, mnemo.ErrCollectionKind) {
		t.Errorf("a chat memory over the tool memory's texts: %v, want ErrCollectionKind", err)
	}
	w, err := window.NewStored(ctx, s, "conv", 100, &window.Options{Recall: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Record(ctx, window.Message{Role: window.User, Content: "my locker code is 4711"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chat.NewVector(ctx, s, &chat.VectorOptions{Collection: "conv.rounds"}); !errors.Is(err, mnemo.ErrCollectionKind) {
		t.Errorf("a chat memory over a window's rounds: %v, want ErrCollectionKind", err)
	}
	if _, err := NewSemantic(ctx, s, &SemanticOptions{Collection: "conv.messages"}); !errors.Is(err, mnemo.ErrCollectionKind) {
		t.Errorf("a fact store over a window's messages: %v, want ErrCollectionKind", err)
	}
	facts, err := NewSemantic(ctx, s, &SemanticOptions{Collection: "facts"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toolmem.New(ctx, s, &toolmem.Options{Name: "facts"}); err != nil {
		t.Errorf("a tool memory named like a fact store (its collections are facts.tools and facts.texts): %v", err)
	}
	if _, err := window.NewStored(ctx, s, "facts", 100, nil); err != nil {
		t.Errorf("a window session named like a fact store: %v", err)
	}
	if err := facts.Store(ctx, "Paul works at Google"); err != nil {
		t.Fatal(err)
	}
	if n, err := tools.Count(ctx); err != nil || n != 1 {
		t.Errorf("the tool memory after the refusals: %d entries, %v", n, err)
	}
	if h, err := w.History(ctx); err != nil || len(h) != 1 {
		t.Errorf("the window after the refusals: %v, %v", h, err)
	}
}

// TestSemanticTextModeDistances: in text mode every hit has its real
// cosine distance to the query (it was always 0), so MaxDistance means
// what it means in the other modes.
func TestSemanticTextModeDistances(t *testing.T) {
	s, err := NewSemantic(ctx, memtest.Store(t), &SemanticOptions{Mode: mnemo.ModeText, Spread: new(float32(0))})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Paul works at Google", "Paul works at Google in Zurich on search ranking", "Sarah works from home"} {
		if err := s.Store(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.SearchHits(ctx, "Paul works", 5)
	if err != nil {
		t.Fatal(err)
	}
	var ds []float32
	for _, h := range hits {
		ds = append(ds, h.Distance)
	}
	if len(ds) != 3 || slices.Min(ds) == slices.Max(ds) || slices.Min(ds) <= 0 {
		t.Fatalf("text mode distances %v: want 3 different, above 0", ds)
	}
	cut := (slices.Min(ds) + slices.Max(ds)) / 2
	got, err := s.SearchWithin(ctx, "Paul works", 5, cut)
	if err != nil || len(got) == 0 || len(got) == 3 {
		t.Fatalf("SearchWithin %v: %q, %v; want some of the 3", cut, got, err)
	}
}
