package toolmem

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/scope"
)

// TestScopesNeverCross is a model test: users store, replace and delete
// entries in one pair of collections through handles of their own scope;
// every read returns exactly the user's entries, and another user's
// handle can neither read, overwrite nor delete them.
func TestScopesNeverCross(t *testing.T) {
	db := memtest.Store(t)
	const users = 8
	handles := make([]*Memory, users)
	for u := range handles {
		m, err := New(ctx, db, &Options{Name: "shared", Scope: scope.Of("user", fmt.Sprint("u", u)), SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		handles[u] = m
	}
	model := make([]map[string]string, users) // id -> question
	for u := range model {
		model[u] = map[string]string{}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 200 {
		u := rng.IntN(users)
		m, other := handles[u], handles[(u+1)%users]
		switch op := rng.IntN(10); {
		case op < 7 || len(model[u]) == 0:
			q := fmt.Sprintf("what is the weather in city %d (step %d)", rng.IntN(4), step)
			id, err := m.Store(ctx, Entry{Question: q, ToolName: "get_weather"})
			if err != nil {
				t.Fatal(err)
			}
			model[u][id] = q
		case op < 9:
			id := firstKey(model[u])
			if err := other.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Store(ctx, Entry{ID: id, Question: "hijack", ToolName: "x"}); !errors.Is(err, ErrInvalid) {
				t.Fatalf("another scope overwrote entry %s: %v", id, err)
			}
			if err := m.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(model[u], id)
		default:
			id := firstKey(model[u])
			q := model[u][id] + " again"
			if _, err := m.Store(ctx, Entry{ID: id, Question: q, ToolName: "get_weather"}); err != nil {
				t.Fatal(err)
			}
			model[u][id] = q
		}
	}
	for u, m := range handles {
		got, err := m.Retrieve(ctx, "what is the weather in city", &Search{TopK: 500, Threshold: new(float32(-1))})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(model[u]) {
			t.Fatalf("user %d retrieves %d entries, has %d", u, len(got), len(model[u]))
		}
		for _, e := range got {
			if model[u][e.ID] != e.Question || e.Scope["user"] != fmt.Sprint("u", u) {
				t.Fatalf("user %d retrieved %+v", u, e)
			}
		}
		if n, err := m.Count(ctx); err != nil || n != len(model[u]) {
			t.Fatalf("user %d Count = %d, %v; want %d", u, n, err, len(model[u]))
		}
		for id := range model[(u+1)%users] {
			if _, ok, _ := m.Get(ctx, id); ok {
				t.Fatalf("user %d's handle gets another user's entry", u)
			}
		}
	}
}

func firstKey(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[0]
}

// TestWhereFilter filters a retrieval by tool name and by the caller's
// metadata, which comes back as stored.
func TestWhereFilter(t *testing.T) {
	m, err := Open("", &Options{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for i := range 6 {
		tool := []string{"get_weather", "get_forecast"}[i%2]
		if _, err := m.Store(ctx, Entry{Question: fmt.Sprintf("weather in Lisbon %d", i), ToolName: tool, Metadata: map[string]any{"team": i % 3}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.Retrieve(ctx, "weather in Lisbon", &Search{TopK: 10, Where: map[string]any{"tool_name": "get_forecast", "team": map[string]any{"$ne": 0}}})
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, e := range got {
		qs = append(qs, e.Question)
		if e.ToolName != "get_forecast" || e.Metadata["team"] == nil || e.Why.Score <= 0 {
			t.Fatalf("entry %+v", e)
		}
	}
	slices.Sort(qs)
	if want := []string{"weather in Lisbon 1", "weather in Lisbon 5"}; !slices.Equal(qs, want) {
		t.Fatalf("filtered retrieval = %q, want %q", qs, want)
	}
	for _, meta := range []map[string]any{{"tool_name": "x"}, {"mnemo.expires": 1}} {
		if _, err := m.Store(ctx, Entry{Question: "q", Metadata: meta}); !errors.Is(err, ErrInvalid) {
			t.Errorf("metadata %v: %v, want ErrInvalid", meta, err)
		}
	}
	if _, err := m.Retrieve(ctx, "q", &Search{Where: map[string]any{"mnemo.scope.user": "a"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a filter on a reserved key: %v", err)
	}
}

// TestExpiry checks TTL and ExpiresAt with a fake clock on tool entries
// and texts: expired ones are never returned, Stats counts them until
// Sweep deletes them.
func TestExpiry(t *testing.T) {
	clock := memtest.NewClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	m, err := New(ctx, memtest.Store(t), &Options{TTL: time.Hour, Clock: clock.Now, SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	short, _ := m.Store(ctx, Entry{Question: "book a table for two", ToolName: "book", ExpiresAt: clock.Now().Add(time.Minute)})
	long, _ := m.Store(ctx, Entry{Question: "book a flight to Porto", ToolName: "book"})
	m.SaveText(ctx, "the user prefers window seats")
	if e, _, _ := m.Get(ctx, long); !e.ExpiresAt.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("ExpiresAt = %v", e.ExpiresAt)
	}
	clock.Advance(2 * time.Minute)
	if _, ok, _ := m.Get(ctx, short); ok {
		t.Fatal("an expired entry is returned by Get")
	}
	got, _ := m.Retrieve(ctx, "book a table", &Search{TopK: 10, Threshold: new(float32(-1))})
	if len(got) != 1 || got[0].ID != long {
		t.Fatalf("Retrieve = %+v, want only the live entry", got)
	}
	if st, err := m.Stats(ctx); err != nil || st != (Stats{Tools: 1, Texts: 1, Expired: 1}) {
		t.Fatalf("Stats = %+v, %v", st, err)
	}
	clock.Advance(time.Hour)
	if texts, _ := m.SearchText(ctx, "window seats", nil); len(texts) != 0 {
		t.Fatalf("an expired text is returned: %+v", texts)
	}
	if n, err := m.Sweep(ctx); err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want 3", n, err)
	}
	if st, _ := m.Stats(ctx); st != (Stats{}) {
		t.Fatalf("Stats after Sweep = %+v", st)
	}
	if _, err := New(ctx, memtest.Store(t), &Options{TTL: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a negative TTL: %v", err)
	}
}

// TestScopesRace: two scopes storing one ID at once never both win, and
// a sweep never deletes an entry stored again after it expired.
func TestScopesRace(t *testing.T) {
	db := memtest.Store(t)
	clock := memtest.NewClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	open := func(user string) *Memory {
		m, err := New(ctx, db, &Options{Name: "race", Scope: scope.Of("user", user), Clock: clock.Now, SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	a, b := open("a"), open("b")
	for round := range 30 {
		id := fmt.Sprint("e", round)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, m := range []*Memory{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = m.Store(ctx, Entry{ID: id, Question: "book a table for two", ToolName: "book"})
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: both or neither won: %v, %v", round, errs[0], errs[1])
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatal(err)
			}
		}
	}
	// Expired entries swept while one is stored again: it survives.
	var ids []string
	for i := range 50 {
		id, err := a.Store(ctx, Entry{Question: fmt.Sprint("old question ", i), ToolName: "t", ExpiresAt: clock.Now().Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	clock.Advance(time.Hour)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := a.Sweep(ctx); err != nil {
			t.Error(err)
		}
	}()
	again := ids[len(ids)-1]
	if _, err := a.Store(ctx, Entry{ID: again, Question: "asked again", ToolName: "t"}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, ok, err := a.Get(ctx, again); !ok || err != nil {
		t.Fatalf("the entry stored again was swept: %v", err)
	}
}
