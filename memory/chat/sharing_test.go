package chat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/postgres"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

func mustVector(t *testing.T, s mnemo.Store, opts *VectorOptions) *VectorMemory {
	t.Helper()
	v, err := NewVector(ctx, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustAdd(t *testing.T, v *VectorMemory, text string) {
	t.Helper()
	if err := v.Add(ctx, Content{Content: text, MimeType: TextPlain}); err != nil {
		t.Fatalf("Add(%q): %v", text, err)
	}
}

func queried(t *testing.T, v *VectorMemory, q string) []string {
	t.Helper()
	res, err := v.Query(ctx, q)
	if err != nil {
		t.Fatalf("Query(%q): %v", q, err)
	}
	var out []string
	for _, r := range res.Results {
		out = append(out, r.Content.(string))
	}
	return out
}

// TestClearKeepsOtherHandles: two handles on one memory (two Stores on
// the same data); one Clears, and the other keeps adding and querying.
func TestClearKeepsOtherHandles(t *testing.T) {
	s1, s2 := memtest.TwoStores(t)
	a := mustVector(t, s1, nil)
	b := mustVector(t, s2, nil)
	mustAdd(t, a, "the cat sleeps on the sofa")
	mustAdd(t, b, "the dog sleeps in the garden")
	if err := a.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queried(t, b, "sleeps"); len(got) != 0 {
		t.Fatalf("after the other handle's Clear: %q, want nothing", got)
	}
	mustAdd(t, b, "the bird sleeps in its nest")
	if got := queried(t, b, "sleeps"); !slices.Equal(got, []string{"the bird sleeps in its nest"}) {
		t.Fatalf("after Clear and Add: %q", got)
	}
	if got := queried(t, a, "sleeps"); !slices.Equal(got, []string{"the bird sleeps in its nest"}) {
		t.Fatalf("the clearing handle sees %q", got)
	}
}

// TestDropKeepsOtherHandles: an operator drops the memory's collection;
// the handle creates it again at its next call instead of failing for
// good.
func TestDropKeepsOtherHandles(t *testing.T) {
	s := memtest.Store(t)
	v := mustVector(t, s, nil)
	mustAdd(t, v, "the cat sleeps on the sofa")
	if err := s.DropCollection(ctx, v.Name()); err != nil {
		t.Fatal(err)
	}
	if got := queried(t, v, "sleeps"); len(got) != 0 {
		t.Fatalf("after the drop: %q, want nothing", got)
	}
	mustAdd(t, v, "the bird sleeps in its nest")
	if got := queried(t, v, "sleeps"); !slices.Equal(got, []string{"the bird sleeps in its nest"}) {
		t.Fatalf("after the drop and Add: %q", got)
	}
}

// TestTextModeScores: in text mode the scores are real (1 - d/2 of the
// query's embedding), not a constant, and the threshold applies to them.
func TestTextModeScores(t *testing.T) {
	s := memtest.Store(t)
	v := mustVector(t, s, &VectorOptions{Mode: mnemo.ModeText, K: 5, Spread: new(float32(0))})
	for _, text := range []string{"pasta with pesto sauce", "pasta with tomato sauce and basil and garlic", "the pasta", "a bicycle with pasta stickers on its frame and wheels"} {
		mustAdd(t, v, text)
	}
	res, err := v.Query(ctx, "pasta with pesto")
	if err != nil {
		t.Fatal(err)
	}
	var scores []float64
	for _, r := range res.Results {
		scores = append(scores, r.Metadata["score"].(float64))
	}
	if len(scores) != 4 || slices.Min(scores) == slices.Max(scores) || slices.Max(scores) >= 1 || slices.Min(scores) <= 0.5 {
		t.Fatalf("text mode scores %v: want 4 different scores in (0.5, 1)", scores)
	}
	mid := float32((slices.Min(scores) + slices.Max(scores)) / 2)
	th := mustVector(t, s, &VectorOptions{Mode: mnemo.ModeText, K: 5, Spread: new(float32(0)), Threshold: &mid})
	res, err = th.Query(ctx, "pasta with pesto")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Results); n == 0 || n == 4 {
		t.Fatalf("threshold %v between the scores kept %d of 4", mid, n)
	}
}

// TestCollectionKinds: memories of different kinds that pick the same
// collection name are refused with mnemo.ErrCollectionKind, whichever
// comes first, and the first keeps working.
func TestCollectionKinds(t *testing.T) {
	s := memtest.Store(t)
	v := mustVector(t, s, &VectorOptions{Collection: "agent.texts"})
	mustAdd(t, v, "kept")
	if _, err := s.CreateCollection(ctx, "agent.texts", v.c.Get().Config()); err != nil {
		t.Fatalf("the same kind again: %v", err)
	}
	other := mnemo.CollectionConfig{Dimension: 384, Kind: "toolmem.texts"}
	if _, err := s.CreateCollection(ctx, "agent.texts", other); !errors.Is(err, mnemo.ErrCollectionExists) {
		t.Fatalf("another kind's config: %v, want ErrCollectionExists", err)
	}
	// A collection another kind made, with the same embedder.
	cfg := v.c.Get().Config()
	cfg.Kind = "window.rounds"
	if _, err := s.CreateCollection(ctx, "conv.rounds", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := NewVector(ctx, s, &VectorOptions{Collection: "conv.rounds"}); !errors.Is(err, mnemo.ErrCollectionKind) {
		t.Fatalf("a window's rounds opened as a chat memory: %v, want ErrCollectionKind", err)
	}
	if got := queried(t, v, "kept"); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("the first memory after the refusals: %q", got)
	}
}

// TestClearTwoProcesses: another process (this test binary again, on the
// same PostgreSQL schema) clears the memory; this process's handle keeps
// working.
func TestClearTwoProcesses(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	v := mustVector(t, memtest.OpenPG(t, dsn), nil)
	mustAdd(t, v, "the cat sleeps on the sofa")
	cmd := exec.Command(os.Args[0], "-test.run=^TestClearProcess$")
	cmd.Env = append(os.Environ(), "MNEMO_CHAT_CLEAR_DSN="+dsn)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cleared") {
		t.Fatalf("clearing process: %v\n%s", err, out)
	}
	if got := queried(t, v, "sleeps"); len(got) != 0 {
		t.Fatalf("after the other process's Clear: %q, want nothing", got)
	}
	mustAdd(t, v, "the bird sleeps in its nest")
	if got := queried(t, v, "sleeps"); !slices.Equal(got, []string{"the bird sleeps in its nest"}) {
		t.Fatalf("after Clear and Add: %q", got)
	}
}

// TestClearProcess is the process TestClearTwoProcesses starts; run
// directly, it does nothing.
func TestClearProcess(t *testing.T) {
	dsn := os.Getenv("MNEMO_CHAT_CLEAR_DSN")
	if dsn == "" {
		t.Skip("the clearing process of TestClearTwoProcesses")
	}
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := mustVector(t, s, nil)
	if err := v.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, "cleared")
	w.Flush()
}
