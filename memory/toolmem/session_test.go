package toolmem

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestSessionsSpread: the texts of two sessions interleaved in one
// collection; a match lifts only its own session's neighbours, and a
// session's entries read back with it.
func TestSessionsSpread(t *testing.T) {
	ctx := context.Background()
	m, err := New(ctx, memtest.Store(t), &Options{Mode: mnemo.ModeText, Session: "a", SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i, text := range []string{"a zero", "b zero", "a one", "b one zebra", "a two", "b two", "a three", "b three", "b four"} {
		session := ""
		if text[0] == 'b' {
			session = "b"
		}
		if _, err := m.SaveTextWith(ctx, TextEntry{Text: text, Session: session}); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
	}
	es, err := m.SearchText(ctx, "zebra", &Search{TopK: 10, Threshold: new(float32(0))})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Text)
		if e.Session != "b" {
			t.Fatalf("%q: session %q", e.Text, e.Session)
		}
	}
	slices.Sort(got)
	if want := []string{"b one zebra", "b three", "b two", "b zero"}; !slices.Equal(got, want) {
		t.Fatalf("zebra: %q, want %q", got, want)
	}
	if _, err := m.Store(ctx, Entry{Question: "q", ToolName: "t", Position: new(int64(-1 << 53))}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a position past -2^53: %v", err)
	}
}

// TestStoreAgainKeepsPlace: an entry read and stored again keeps its
// position, given or from the sequence.
func TestStoreAgainKeepsPlace(t *testing.T) {
	ctx := context.Background()
	m, err := New(ctx, memtest.Store(t), &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Store(ctx, Entry{ID: "e1", Question: "when does the flight land", ToolName: "t", Position: new(int64(5))}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Store(ctx, Entry{ID: "e2", Question: "which gate", ToolName: "t"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"e1", "e2"} {
		e, ok, err := m.Get(ctx, id)
		if err != nil || !ok || e.Position == nil {
			t.Fatalf("%s: %+v %v %v", id, e, ok, err)
		}
		was := *e.Position
		e.ResultSummary = "changed"
		if _, err := m.Store(ctx, e); err != nil {
			t.Fatal(err)
		}
		if again, _, _ := m.Get(ctx, id); again.Position == nil || *again.Position != was {
			t.Fatalf("%s: position %v after storing it again, want %d", id, again.Position, was)
		}
	}
}
