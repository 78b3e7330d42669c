package toolmem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

var ctx = context.Background()

func mustOpen(t *testing.T, dir string, opts *Options) *Memory {
	t.Helper()
	m, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStoreRetrieve(t *testing.T) {
	m := mustOpen(t, "", nil)
	defer m.Close()
	when := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	id, err := m.Store(ctx, Entry{
		Question: "What is the weather in Paris today?", ToolName: "get_weather",
		ToolArgs: map[string]any{"city": "Paris", "units": "metric"}, ResultSummary: Summarize("18°C, light rain"), Timestamp: when,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Store(ctx, Entry{Question: "Convert 100 US dollars to euros", ToolName: "fx", ToolArgs: map[string]any{"from": "USD", "to": "EUR", "amount": 100}})
	got, err := m.Retrieve(ctx, "what's the weather like in Paris", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != id || got[0].ToolName != "get_weather" || got[0].ToolArgs["city"] != "Paris" ||
		!got[0].Timestamp.Equal(when) || got[0].ResultSummary != "18°C, light rain" || got[0].Similarity < m.DefaultThreshold() {
		t.Fatalf("Retrieve = %+v", got)
	}
	all, _ := m.Retrieve(ctx, "weather", &Search{TopK: 5, Threshold: new(float32(0))})
	if len(all) != 2 || all[0].ID != id || all[0].Similarity < all[1].Similarity {
		t.Fatalf("threshold 0 should return both, nearest first: %+v", all)
	}
	if count(t, m) != 2 {
		t.Fatalf("Count = %d", count(t, m))
	}
	// Store replaces by ID; Delete is a no-op when absent.
	m.Store(ctx, Entry{ID: id, Question: "Paris forecast for tomorrow", ToolName: "get_forecast"})
	if count(t, m) != 2 {
		t.Fatalf("replace changed Count to %d", count(t, m))
	}
	if err := m.Delete(ctx, "no-such-id"); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(ctx, id); err != nil || count(t, m) != 1 {
		t.Fatalf("Delete: %v, Count %d", err, count(t, m))
	}
}

func TestThresholdBoundaryAndText(t *testing.T) {
	m := mustOpen(t, "", nil)
	defer m.Close()
	tid, err := m.SaveText(ctx, "The deploy key lives in the team vault")
	if err != nil || tid == "" {
		t.Fatal(tid, err)
	}
	got, _ := m.SearchText(ctx, "The deploy key lives in the team vault", nil)
	if len(got) != 1 || got[0].ID != tid || got[0].Similarity < 0.999 {
		t.Fatalf("exact text search: %+v", got)
	}
	// A hit exactly at the threshold is kept.
	exact := got[0].Similarity
	if got, _ := m.SearchText(ctx, "The deploy key lives in the team vault", &Search{Threshold: new(float32(exact))}); len(got) != 1 {
		t.Fatal("a hit at the threshold was dropped")
	}
	if count(t, m) != 0 {
		t.Fatal("texts counted as tool entries")
	}
}

func TestBadInput(t *testing.T) {
	m := mustOpen(t, "", nil)
	defer m.Close()
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"empty question", storeErr(m, Entry{Question: ""}), ErrEmptyText},
		{"whitespace question", storeErr(m, Entry{Question: " \t\n "}), ErrEmptyText},
		{"invalid utf8", storeErr(m, Entry{Question: "bad \xff"}), ErrInvalid},
		{"long id", storeErr(m, Entry{ID: strings.Repeat("x", 600), Question: "ok"}), ErrInvalid},
		{"unencodable args", storeErr(m, Entry{Question: "ok", ToolArgs: map[string]any{"f": func() {}}}), ErrInvalid},
		{"empty text", func() error { _, err := m.SaveText(ctx, ""); return err }(), ErrEmptyText},
		{"negative topk", func() error { _, err := m.Retrieve(ctx, "x", &Search{TopK: -1}); return err }(), ErrInvalid},
		{"delete empty id", m.Delete(ctx, ""), ErrInvalid},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if count(t, m) != 0 {
		t.Fatalf("rejected input stored %d entries", count(t, m))
	}
}

func storeErr(m *Memory, e Entry) error { _, err := m.Store(ctx, e); return err }

func TestSummarize(t *testing.T) {
	long := strings.Repeat("é", 400)
	if s := Summarize(long); len([]rune(s)) != 300 || s != strings.Repeat("é", 300) {
		t.Fatalf("Summarize cut to %d runes", len([]rune(s)))
	}
	if Summarize("short") != "short" {
		t.Fatal("short result changed")
	}
	if id := NewEntryID(); len(id) != 36 || id[14] != '4' {
		t.Fatalf("NewEntryID = %q, want a UUID v4", id)
	}
}

func TestPersistenceAndEmbedderMismatch(t *testing.T) {
	dir := t.TempDir()
	m := mustOpen(t, dir, nil)
	id, _ := m.Store(ctx, Entry{Question: "list open pull requests", ToolName: "gh_prs"})
	tid, _ := m.SaveText(ctx, "the staging database is read-only on Fridays")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = mustOpen(t, dir, nil)
	got, _ := m.Retrieve(ctx, "list open pull requests", nil)
	texts, _ := m.SearchText(ctx, "staging database Fridays", &Search{Threshold: new(float32(0))})
	if len(got) != 1 || got[0].ID != id || len(texts) != 1 || texts[0].ID != tid || got[0].Timestamp.IsZero() {
		t.Fatalf("after reopen: %+v, %+v", got, texts)
	}
	m.Close()
	other, _ := embed.NewHashing(128)
	if _, err := Open(dir, &Options{Embedder: other}); !errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("another embedder: %v", err)
	}
}

func TestConcurrent(t *testing.T) {
	db, _ := engine.Open("", &engine.Options{InMemory: true})
	defer db.Close()
	m, err := New(context.Background(), db.Store(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				q := fmt.Sprintf("question %d from worker %d about topic %d", i, w, i%5)
				if _, err := m.Store(ctx, Entry{ID: fmt.Sprintf("%d-%d", w, i), Question: q, ToolName: "t"}); err != nil {
					t.Error(err)
					return
				}
				m.Retrieve(ctx, q, nil)
				m.SaveText(ctx, q)
				m.SearchText(ctx, q, nil)
				if i%7 == 0 {
					m.Delete(ctx, fmt.Sprintf("%d-%d", w, i))
				}
				count(t, m)
			}
		}(w)
	}
	wg.Wait()
	if want := 4 * (30 - 5); count(t, m) != want {
		t.Fatalf("Count = %d, want %d", count(t, m), want)
	}
}

// TestNonFiniteNumbers checks that NaN and infinities, as a threshold or
// inside tool arguments, are errors rather than silently empty results.
func TestNonFiniteNumbers(t *testing.T) {
	m := mustOpen(t, "", nil)
	defer m.Close()
	const q = "what is the weather in Paris"
	if _, err := m.Store(ctx, Entry{Question: q, ToolName: "get_weather"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SaveText(ctx, q); err != nil {
		t.Fatal(err)
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	retrieve := func(s *Search) func() error {
		return func() error { _, err := m.Retrieve(ctx, q, s); return err }
	}
	searchText := func(s *Search) func() error {
		return func() error { _, err := m.SearchText(ctx, q, s); return err }
	}
	store := func(args map[string]any) func() error {
		return func() error { return storeErr(m, Entry{Question: q, ToolName: "t", ToolArgs: args}) }
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"Retrieve, NaN threshold", retrieve(&Search{Threshold: new(float32(nan))})},
		{"Retrieve, +Inf threshold", retrieve(&Search{Threshold: new(float32(inf))})},
		{"Retrieve, -Inf threshold", retrieve(&Search{Threshold: new(float32(-inf))})},
		{"Retrieve, NaN threshold and TopK 5", retrieve(&Search{TopK: 5, Threshold: new(float32(nan))})},
		{"SearchText, NaN threshold", searchText(&Search{Threshold: new(float32(nan))})},
		{"SearchText, -Inf threshold", searchText(&Search{Threshold: new(float32(-inf))})},
		{"Store, NaN argument", store(map[string]any{"lat": math.NaN()})},
		{"Store, nested +Inf argument", store(map[string]any{"range": []any{1.0, math.Inf(1)}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	if count(t, m) != 1 {
		t.Fatalf("Count = %d after rejected stores, want 1", count(t, m))
	}
}

// nested returns an object nesting levels objects deep: {"a": {"a": ...
// {"leaf": 1}}}.
func nested(levels int) map[string]any {
	m := map[string]any{"leaf": 1.0}
	for range levels - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

// TestDeeplyNestedArgs stores tool arguments nested deeper than the
// database stores metadata: Store must fail and store nothing, and the
// memory must stay usable and reopen.
func TestDeeplyNestedArgs(t *testing.T) {
	dir := t.TempDir()
	m := mustOpen(t, dir, nil)
	if _, err := m.Store(ctx, Entry{Question: "list open pull requests", ToolName: "gh_prs"}); err != nil {
		t.Fatal(err)
	}
	var unmarshalled map[string]any
	doc := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	if err := json.Unmarshal([]byte(doc), &unmarshalled); err != nil {
		t.Fatal(err)
	}
	arrays := []any{1.0}
	for range 99 {
		arrays = []any{arrays}
	}
	cycle := map[string]any{"tool": "x"}
	cycle["self"] = cycle
	tests := []struct {
		name string
		args map[string]any
	}{
		{"10,000 levels, as json.Unmarshal returns them", unmarshalled},
		{"64 levels", nested(64)},
		{"100 levels of arrays", map[string]any{"a": arrays}},
		{"a map that contains itself", cycle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := storeErr(m, Entry{Question: "what is the weather in Paris", ToolName: "t", ToolArgs: tt.args})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "tool_args") {
				t.Errorf("Store = %v, want ErrInvalid naming tool_args", err)
			}
		})
	}
	if count(t, m) != 1 {
		t.Fatalf("Count = %d after rejected stores, want 1", count(t, m))
	}
	// Arguments well within the limit are stored and come back whole.
	ok := nested(20)
	id, err := m.Store(ctx, Entry{Question: "what is the weather in Paris", ToolName: "t", ToolArgs: ok})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = Open(dir, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer m.Close()
	if count(t, m) != 2 {
		t.Fatalf("Count = %d after reopen, want 2", count(t, m))
	}
	got, err := m.Retrieve(ctx, "what is the weather in Paris", nil)
	if err != nil || len(got) != 1 || got[0].ID != id {
		t.Fatalf("Retrieve after reopen = %+v, %v", got, err)
	}
	if gotJSON, _ := json.Marshal(got[0].ToolArgs); string(gotJSON) != string(must(json.Marshal(ok))) {
		t.Fatalf("arguments after reopen = %s", gotJSON)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
