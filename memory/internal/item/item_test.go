package item

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/memory/scope"
)

var errBad = errors.New("bad")

func TestHistoryBounded(t *testing.T) {
	var meta map[string]any
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range MaxHistory + 10 {
		meta = WithChange(meta, Change{Old: strings.Repeat("o", 1000), New: strings.Repeat("n", 1000), At: at.Add(time.Duration(i) * time.Second)})
	}
	h := History(meta)
	if len(h) == 0 || len(h) > MaxHistory || len(meta[HistoryField].(string)) > MaxHistoryBytes {
		t.Fatalf("%d changes, %d bytes", len(h), len(meta[HistoryField].(string)))
	}
	if last := h[len(h)-1]; !last.At.Equal(at.Add(time.Duration(MaxHistory+9) * time.Second)) {
		t.Fatalf("the newest change was dropped: %v", last.At)
	}
	huge := WithChange(nil, Change{Old: strings.Repeat("é", MaxChangeText), New: "x"})
	if c := History(huge)[0]; len(c.Old) > MaxChangeText+len("…") || !strings.HasSuffix(c.Old, "…") {
		t.Fatalf("a huge side was not cut: %d bytes", len(c.Old))
	}
}

func TestReadFilter(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	r := Read{Scope: scope.Of("user", "a"), Now: now, Where: map[string]any{"topic": "x"}}
	f, err := r.Filter(errBad)
	if err != nil {
		t.Fatal(err)
	}
	live := Stamp(map[string]any{"topic": "x"}, scope.Of("user", "a"), now.Add(time.Second))
	cases := []struct {
		meta map[string]any
		want bool
	}{
		{live, true},
		{Stamp(map[string]any{"topic": "x"}, scope.Of("user", "a"), time.Time{}), true},
		{Stamp(map[string]any{"topic": "x"}, scope.Of("user", "a"), now), false}, // expires at now
		{Stamp(map[string]any{"topic": "x"}, scope.Of("user", "b"), time.Time{}), false},
		{Stamp(map[string]any{"topic": "y"}, scope.Of("user", "a"), time.Time{}), false},
	}
	for _, c := range cases {
		if got := f.Match(c.meta); got != c.want {
			t.Errorf("Match(%v) = %v, want %v", c.meta, got, c.want)
		}
	}
	if f, err := (Read{}).Filter(errBad); f != nil || err != nil {
		t.Fatalf("an empty read has filter %v, %v", f, err)
	}
	if _, err := (Read{Where: map[string]any{"$or": []any{map[string]any{"mnemo.pos": 1}}}}).Filter(errBad); !errors.Is(err, errBad) {
		t.Fatalf("a filter on a reserved key: %v", err)
	}
	if got := Strip(live); len(got) != 1 || got["topic"] != "x" {
		t.Fatalf("Strip = %v", got)
	}
	if !Expired(live, now.Add(time.Second)) || Expired(live, now) {
		t.Fatal("Expired is wrong at the boundary")
	}
}
