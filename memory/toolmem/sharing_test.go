package toolmem

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestTextModeSimilarity: in text mode every entry has its real
// similarity to the question, so the default threshold keeps related
// entries (it once dropped everything: similarity was always 0).
func TestTextModeSimilarity(t *testing.T) {
	m, err := New(ctx, memtest.Store(t), &Options{Mode: mnemo.ModeText, Spread: new(float32(0))})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"weather in Paris today", "weather in Paris and in Lyon tomorrow morning", "is it raining in Paris"} {
		if _, err := m.Store(ctx, Entry{Question: q, ToolName: "get_weather"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.Retrieve(ctx, "weather in Paris", &Search{TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	var sims []float32
	for _, e := range got {
		sims = append(sims, e.Similarity)
	}
	if len(sims) != 3 || slices.Min(sims) == slices.Max(sims) || slices.Min(sims) < m.DefaultThreshold() {
		t.Fatalf("text mode similarities %v: want 3 different ones over the default threshold %v", sims, m.DefaultThreshold())
	}
	texts, err := m.SearchText(ctx, "weather", nil)
	if err != nil || len(texts) != 0 {
		t.Fatalf("SearchText on no texts: %v, %v", texts, err)
	}
}

// TestRetrieveNotBehindFirstStore: a first Store scans the collection for
// its position; a server that freezes during that scan holds up neither
// Retrieve nor a Store with a deadline past it.
func TestRetrieveNotBehindFirstStore(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	var freeze atomic.Bool
	s := &memtest.Faulty{Store: memtest.Store(t), Hook: func(ctx context.Context, op, name string) error {
		if freeze.Load() && op == "scan" {
			entered <- struct{}{}
			<-release
		}
		return nil
	}}
	m, err := New(ctx, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	freeze.Store(true)
	done := make(chan error)
	go func() {
		_, err := m.Store(ctx, Entry{Question: "weather in Paris", ToolName: "get_weather"})
		done <- err
	}()
	<-entered
	// Retrieve does not wait for the frozen Store (it would never return:
	// the freeze lasts until the end of the test).
	if _, err := m.Retrieve(ctx, "weather in Paris", nil); err != nil {
		t.Fatalf("Retrieve during a frozen first Store: %v", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := m.Store(dctx, Entry{Question: "weather in Rome", ToolName: "get_weather"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Store behind a frozen first Store: %v, want DeadlineExceeded", err)
	}
	freeze.Store(false)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := count(t, m); n != 1 {
		t.Fatalf("Count = %d, want 1 (the Store that gave up stored nothing)", n)
	}
}

// TestCollectionKinds: a fact store, a chat memory or a window that picks
// a tool memory's collection name is refused with ErrCollectionKind, and
// the tool memory is left as it was.
func TestCollectionKinds(t *testing.T) {
	s := memtest.Store(t)
	m, err := New(ctx, s, &Options{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Store(ctx, Entry{Question: "weather in Paris", ToolName: "get_weather"}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Collection(ctx, "agent.tools")
	if err != nil {
		t.Fatal(err)
	}
	if c.Config().Kind != KindTools {
		t.Fatalf("kind %q, want %q", c.Config().Kind, KindTools)
	}
	cfg := c.Config()
	cfg.Kind = "store.semantic"
	if _, err := s.CreateCollection(ctx, "agent.tools", cfg); !errors.Is(err, mnemo.ErrCollectionExists) {
		t.Fatalf("another kind over the tools: %v, want ErrCollectionExists", err)
	}
	// The same name as another tool memory's is the same memory.
	again, err := New(ctx, s, &Options{Name: "agent"})
	if err != nil || count(t, again) != 1 {
		t.Fatalf("the same tool memory again: %v", err)
	}
	if _, err := New(ctx, s, &Options{Name: "agent.tools"}); err != nil {
		t.Fatalf("a tool memory whose collections merely start alike: %v", err)
	}
	// The other adapters' kinds are checked in their own packages; here,
	// a tool memory opened over a collection of another kind.
	cfg.Kind = "chat.vector"
	if _, err := s.CreateCollection(ctx, "other.texts", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, s, &Options{Name: "other"}); !errors.Is(err, mnemo.ErrCollectionKind) {
		t.Fatalf("a tool memory over a chat memory's collection: %v, want ErrCollectionKind", err)
	}
}
