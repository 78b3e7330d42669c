package item

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
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
	if n := jsonSize(meta[HistoryField]); len(h) == 0 || len(h) > MaxHistory || n > MaxHistoryBytes {
		t.Fatalf("%d changes, %d bytes", len(h), n)
	}
	if last := h[len(h)-1]; !last.At.Equal(at.Add(time.Duration(MaxHistory+9) * time.Second)) {
		t.Fatalf("the newest change was dropped: %v", last.At)
	}
	huge := WithChange(nil, Change{Old: strings.Repeat("é", MaxChangeText), New: "x"})
	if c := History(huge)[0]; len(c.Old) > MaxChangeText+len("…") || !strings.HasSuffix(c.Old, "…") {
		t.Fatalf("a huge side was not cut: %d bytes", len(c.Old))
	}
}

// TestHistoryFitsMetadata: however large the item's own metadata, the
// metadata with its history stays under mnemo.MaxMetadataBytes, dropping
// the oldest changes first, all of them if need be.
func TestHistoryFitsMetadata(t *testing.T) {
	for _, own := range []int{0, 600 << 10, mnemo.MaxMetadataBytes - 20<<10, mnemo.MaxMetadataBytes - 100} {
		meta := map[string]any{"blob": strings.Repeat("x", own)}
		for i := range 10 {
			meta = WithChange(meta, Change{Old: strings.Repeat(`"`, MaxChangeText), New: fmt.Sprint(i), At: time.Unix(int64(i), 0)})
			if n := jsonSize(meta); n > mnemo.MaxMetadataBytes {
				t.Fatalf("own %d, change %d: metadata of %d bytes", own, i, n)
			}
		}
		h := History(meta)
		if own <= 600<<10 && len(h) < 5 {
			t.Fatalf("own %d: %d changes kept, want the newest 5 or more", own, len(h))
		}
		if len(h) > 0 && h[len(h)-1].New != "9" {
			t.Fatalf("own %d: the newest change was dropped", own)
		}
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

func TestExpiryBounds(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	p, err := NewPolicy(errBad, nil, time.Hour, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ttl  time.Duration
		at   time.Time
		want time.Time
		bad  bool
	}{
		{0, time.Time{}, now.Add(time.Hour), false},
		{time.Minute, time.Time{}, now.Add(time.Minute), false},
		{0, now.Add(time.Second), now.Add(time.Second), false},
		{0, now, time.Time{}, true},
		{0, now.Add(-time.Hour), time.Time{}, true},
		{0, time.Unix(1<<62, 0), time.Time{}, true},
		{1<<63 - 1, time.Time{}, now.Add(1<<63 - 1), false}, // 292 years: no overflow
		{-time.Second, time.Time{}, time.Time{}, true},
	} {
		got, err := p.Expiry(errBad, c.ttl, c.at)
		if c.bad != (err != nil) || !got.Equal(c.want) {
			t.Errorf("Expiry(%v, %v) = %v, %v", c.ttl, c.at, got, err)
		}
	}
}
