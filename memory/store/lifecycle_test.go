package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/scope"
)

func newSemantic(t *testing.T, o SemanticOptions) *Semantic {
	t.Helper()
	if o.SweepEvery == 0 {
		o.SweepEvery = -1
	}
	s, err := NewSemantic(context.Background(), memtest.Store(t), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSemanticScopesNeverCross is a model test: many users write and read
// one collection through handles of their own scope, in random order;
// every read returns exactly the user's live facts, and the unscoped
// handle sees them all.
func TestSemanticScopesNeverCross(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	const users = 12
	handles := make([]*Semantic, users)
	for u := range handles {
		s, err := NewSemantic(ctx, db, &SemanticOptions{Collection: "shared", Scope: scope.Of("user", fmt.Sprint("u", u)), SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		handles[u] = s
	}
	all, err := NewSemantic(ctx, db, &SemanticOptions{Collection: "shared", SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	model := make([]map[string]string, users) // user -> id -> text
	for u := range model {
		model[u] = map[string]string{}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 300 {
		u := rng.IntN(users)
		s := handles[u]
		switch op := rng.IntN(10); {
		case op < 6 || len(model[u]) == 0:
			text := fmt.Sprintf("user %d likes topic %d (step %d)", u, rng.IntN(5), step)
			id, err := s.Add(ctx, text, map[string]any{"step": step})
			if err != nil {
				t.Fatal(err)
			}
			model[u][id] = text
		case op < 8:
			id := anyKey(rng, model[u])
			if err := s.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(model[u], id)
		default:
			id := anyKey(rng, model[u])
			text := model[u][id] + " (updated)"
			if err := s.Update(ctx, id, text); err != nil {
				t.Fatal(err)
			}
			model[u][id] = text
		}
		// Another user's handle can neither see, update nor delete it.
		other := handles[(u+1)%users]
		for id := range model[u] {
			if _, ok, err := other.Get(ctx, id); ok || err != nil {
				t.Fatalf("user %d's handle sees user %d's fact %s (%v)", (u+1)%users, u, id, err)
			}
			if err := other.Update(ctx, id, "hijacked"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("another scope's Update = %v, want ErrNotFound", err)
			}
			other.Delete(ctx, id)
			break
		}
	}
	total := 0
	for u, s := range handles {
		got, err := s.ListAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := valuesOf(model[u])
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("user %d lists %q, want %q", u, got, want)
		}
		hits, err := s.SearchHits(ctx, "likes topic", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if model[u][h.ID] != h.Text || h.Scope["user"] != fmt.Sprint("u", u) {
				t.Fatalf("user %d's search returned %+v", u, h)
			}
		}
		if len(hits) != len(model[u]) {
			t.Fatalf("user %d's search found %d of %d facts", u, len(hits), len(model[u]))
		}
		total += len(model[u])
	}
	if got, err := all.ListAll(ctx); err != nil || len(got) != total {
		t.Fatalf("the unscoped handle lists %d facts, want %d (%v)", len(got), total, err)
	}
	// A cross-scope read is asked for, per call.
	u0 := handles[0]
	hits, err := u0.SearchWith(ctx, "likes topic", &SearchOptions{N: 500, AllScopes: true})
	if err != nil || len(hits) != total {
		t.Fatalf("AllScopes found %d, want %d (%v)", len(hits), total, err)
	}
	hits, err = u0.SearchWith(ctx, "likes topic", &SearchOptions{N: 500, Scope: scope.Of("user", "u3")})
	if err != nil || len(hits) != len(model[3]) {
		t.Fatalf("Scope u3 found %d, want %d (%v)", len(hits), len(model[3]), err)
	}
}

func anyKey(rng *rand.Rand, m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

func valuesOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// TestSemanticFilter checks metadata filters on searches, and that a
// filter may not reach the reserved keys.
func TestSemanticFilter(t *testing.T) {
	ctx := context.Background()
	s := newSemantic(t, SemanticOptions{})
	for i := range 10 {
		topic := []string{"work", "home"}[i%2]
		if _, err := s.Add(ctx, fmt.Sprintf("note %d about the project", i), map[string]any{"topic": topic, "year": 2020 + i}); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.SearchWith(ctx, "note about the project", &SearchOptions{N: 20, Where: map[string]any{"topic": "work", "year": map[string]any{"$gte": 2024}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Text)
		if h.Metadata["topic"] != "work" {
			t.Fatalf("filter let through %+v", h)
		}
	}
	slices.Sort(got)
	if want := []string{"note 4 about the project", "note 6 about the project", "note 8 about the project"}; !slices.Equal(got, want) {
		t.Fatalf("filtered search = %q, want %q", got, want)
	}
	for _, where := range []map[string]any{
		{"mnemo.scope.user": "x"},
		{"$or": []any{map[string]any{"mnemo.expires": 1}}},
		{"year": map[string]any{"$bogus": 1}},
	} {
		if _, err := s.SearchWith(ctx, "note", &SearchOptions{Where: where}); !errors.Is(err, ErrInvalid) {
			t.Errorf("filter %v: %v, want ErrInvalid", where, err)
		}
	}
	if _, err := s.Add(ctx, "x", map[string]any{"mnemo.history": "forged"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Add with a reserved key: %v, want ErrInvalid", err)
	}
}

// TestSemanticDeleteByID checks that Delete takes the ID Add returned,
// removing that fact only, and still removes by exact text.
func TestSemanticDeleteByID(t *testing.T) {
	ctx := context.Background()
	s := newSemantic(t, SemanticOptions{})
	a, _ := s.Add(ctx, "Paul works at Google", nil)
	b, _ := s.Add(ctx, "Paul works at Google", nil)
	s.Store(ctx, "Sarah likes tea")
	if err := s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, a); ok {
		t.Fatal("the fact deleted by ID is still there")
	}
	if _, ok, _ := s.Get(ctx, b); !ok {
		t.Fatal("Delete by ID removed its twin too")
	}
	if err := s.Delete(ctx, "Sarah likes tea"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ListAll(ctx); !slices.Equal(got, []string{"Paul works at Google"}) {
		t.Fatalf("ListAll = %q", got)
	}
	if err := s.Delete(ctx, "0190a0a0-0000-7000-8000-000000000000"); err != nil {
		t.Fatalf("Delete of an absent ID = %v, want a no-op", err)
	}
}

// TestSemanticUpdateHistory checks Update and AddWith Replaces: the ID
// stays, searches find the new text only, and the history records every
// change with the clock's time.
func TestSemanticUpdateHistory(t *testing.T) {
	ctx := context.Background()
	clock := memtest.NewClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	s := newSemantic(t, SemanticOptions{Clock: clock.Now})
	id, _ := s.Add(ctx, "Paul works at Google", map[string]any{"source": "chat"})
	clock.Advance(time.Hour)
	if err := s.Update(ctx, id, "Paul works at Anthropic"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	got, err := s.AddWith(ctx, "Paul works at home", &AddOptions{Replaces: id, Metadata: map[string]any{"source": "email"}})
	if err != nil || got != id {
		t.Fatalf("AddWith Replaces = %q, %v; want %q", got, err, id)
	}
	f, ok, err := s.Get(ctx, id)
	if err != nil || !ok || f.Text != "Paul works at home" || f.Metadata["source"] != "email" {
		t.Fatalf("Get = %+v, %v, %v", f, ok, err)
	}
	want := []Change{
		{Old: "Paul works at Google", New: "Paul works at Anthropic", At: clock.Now().Add(-time.Hour)},
		{Old: "Paul works at Anthropic", New: "Paul works at home", At: clock.Now()},
	}
	h, err := s.History(ctx, id)
	if err != nil || len(h) != 2 {
		t.Fatalf("History = %+v, %v", h, err)
	}
	for i := range want {
		if h[i].Old != want[i].Old || h[i].New != want[i].New || !h[i].At.Equal(want[i].At) {
			t.Fatalf("History[%d] = %+v, want %+v", i, h[i], want[i])
		}
	}
	if texts, _ := s.Search(ctx, "Google", 5); slices.Contains(texts, "Paul works at Google") {
		t.Fatalf("the old text is still found: %q", texts)
	}
	if all, _ := s.ListAll(ctx); len(all) != 1 {
		t.Fatalf("an update left %d facts", len(all))
	}
	if err := s.Update(ctx, "0190a0a0-0000-7000-8000-000000000000", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update of an absent fact = %v", err)
	}
	if _, err := s.History(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("History of an absent fact = %v", err)
	}
	// A huge update keeps the history bounded.
	big := strings.Repeat("long fact ", 10_000)
	for range 3 {
		if err := s.Update(ctx, id, big+fmt.Sprint(clock.Now().Unix())); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	if h, _ := s.History(ctx, id); len(h) != 5 || len(h[4].New) > 17<<10 {
		t.Fatalf("history after huge updates: %d changes, last new %d bytes", len(h), len(h[len(h)-1].New))
	}
}

// TestSemanticExpiry checks TTL and per-fact expiry with a fake clock:
// an expired fact is never returned, Stats counts it until Sweep deletes
// it, and the background sweep deletes it too.
func TestSemanticExpiry(t *testing.T) {
	ctx := context.Background()
	clock := memtest.NewClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	s := newSemantic(t, SemanticOptions{Clock: clock.Now, TTL: time.Hour})
	short, _ := s.AddWith(ctx, "the parking ticket is in the glovebox", &AddOptions{TTL: time.Minute})
	hour, _ := s.Add(ctx, "the meeting room is Lisbon 2", nil)
	forever, _ := s.AddWith(ctx, "the user's name is Ana", &AddOptions{ExpiresAt: clock.Now().Add(100 * 365 * 24 * time.Hour)})
	if f, _, _ := s.Get(ctx, hour); !f.Expires.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("Expires = %v", f.Expires)
	}
	live := func() []string {
		t.Helper()
		got, err := s.ListAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if n := len(live()); n != 3 {
		t.Fatalf("%d live facts, want 3", n)
	}
	clock.Advance(2 * time.Minute)
	if _, ok, _ := s.Get(ctx, short); ok {
		t.Fatal("an expired fact is returned by Get")
	}
	if got, _ := s.Search(ctx, "parking ticket glovebox", 5); slices.Contains(got, "the parking ticket is in the glovebox") {
		t.Fatal("an expired fact is returned by Search")
	}
	if st, err := s.Stats(ctx); err != nil || st != (SemanticStats{Facts: 2, Expired: 1}) {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
	clock.Advance(time.Hour)
	if n, err := s.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want 2", n, err)
	}
	if st, _ := s.Stats(ctx); st != (SemanticStats{Facts: 1}) {
		t.Fatalf("Stats after Sweep = %+v", st)
	}
	if _, ok, _ := s.Get(ctx, forever); !ok {
		t.Fatal("the fact that expires in a century is gone")
	}
	// The background sweep.
	bg, err := NewSemantic(ctx, memtest.Store(t), &SemanticOptions{Clock: clock.Now, TTL: time.Minute, SweepEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	bg.Add(ctx, "soon gone", nil)
	clock.Advance(2 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := bg.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st == (SemanticStats{}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background sweep left %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := NewSemantic(ctx, memtest.Store(t), &SemanticOptions{TTL: -time.Second}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a negative TTL: %v", err)
	}
}

// TestSemanticHitsExplained checks that every hit says why it came back
// and that hits are ordered by Score.
func TestSemanticHitsExplained(t *testing.T) {
	ctx := context.Background()
	s := newSemantic(t, SemanticOptions{})
	for _, f := range []string{"Paul is married to Sarah", "Paul works at Google", "the office is in Lisbon", "Sarah plays the cello"} {
		s.Store(ctx, f)
	}
	hits, err := s.SearchHits(ctx, "work", 10)
	if err != nil || len(hits) == 0 {
		t.Fatalf("SearchHits = %+v, %v", hits, err)
	}
	if hits[0].Text != "Paul works at Google" || hits[0].TextRank != 1 {
		t.Fatalf("first hit %+v, want the fact with the word, text rank 1", hits[0])
	}
	for i, h := range hits {
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("hits not ordered by Score: %+v", hits)
		}
		if h.Spread() != (h.VectorRank == 0 && h.TextRank == 0) || h.Distance < 0 || h.Distance > 2 {
			t.Fatalf("hit %+v", h)
		}
	}
}

// TestSemanticUpdateRaces: an update racing a delete from another handle
// never brings the fact back, and two updates racing keep both changes
// in the history.
func TestSemanticUpdateRaces(t *testing.T) {
	ctx := context.Background()
	s1, s2 := memtest.TwoStores(t)
	a, err := NewSemantic(ctx, s1, &SemanticOptions{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewSemantic(ctx, s2, &SemanticOptions{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for round := range 30 {
		id, err := a.Add(ctx, fmt.Sprint("fact number ", round), nil)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := a.Update(ctx, id, fmt.Sprint("fact number ", round, " updated")); err != nil && !errors.Is(err, ErrNotFound) {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if err := b.Delete(ctx, id); err != nil {
				t.Error(err)
			}
		}()
		wg.Wait()
		if f, ok, _ := a.Get(ctx, id); ok {
			t.Fatalf("round %d: the update brought back the deleted fact: %+v", round, f)
		}
	}
	id, _ := a.Add(ctx, "the meeting is at noon", nil)
	var wg sync.WaitGroup
	for i, h := range []*Semantic{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.Update(ctx, id, fmt.Sprint("the meeting is at ", i+1, " pm")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if h, err := a.History(ctx, id); err != nil || len(h) != 2 || h[1].Old != h[0].New {
		t.Fatalf("two racing updates left the history %+v, %v", h, err)
	}
}
