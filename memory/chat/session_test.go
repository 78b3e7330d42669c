package chat

import (
	"errors"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestSessionsSpread: two conversations interleaved in one collection,
// one through the handle's session and one through AddOptions, one of
// them added out of order with positions: a match lifts only its own
// conversation's neighbours, in its conversation's order.
func TestSessionsSpread(t *testing.T) {
	s := memtest.Store(t)
	v := mustVector(t, s, &VectorOptions{Mode: mnemo.ModeText, K: 10, Session: "a", SweepEvery: -1})
	defer v.Close()
	add := func(text string, o *AddOptions) {
		t.Helper()
		if _, err := v.AddWith(ctx, Content{Content: text, MimeType: TextPlain}, o); err != nil {
			t.Fatalf("AddWith(%q): %v", text, err)
		}
	}
	b := func(p int64) *AddOptions { return &AddOptions{Session: "b", Position: &p} }
	// Conversation b arrives shuffled, with its positions.
	add("a zero", nil)
	add("b three", b(3))
	add("a one", nil)
	add("b one zebra", b(1))
	add("a two", nil)
	add("b zero", b(0))
	add("a three", nil)
	add("b two", b(2))
	res, err := v.Query(ctx, "zebra")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Results {
		got = append(got, c.Content.(string))
	}
	slices.Sort(got)
	if want := []string{"b one zebra", "b three", "b two", "b zero"}; !slices.Equal(got, want) {
		t.Fatalf("zebra: %q, want %q", got, want)
	}
	if _, err := v.AddWith(ctx, Content{Content: "x", MimeType: TextPlain}, &AddOptions{Session: "\x7f"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a control character in a session: %v", err)
	}
}
