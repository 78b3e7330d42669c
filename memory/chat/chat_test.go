package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

var ctx = context.Background()

func TestListMemoryUpdateContext(t *testing.T) {
	l := NewListMemory("prefs")
	mc := &BufferedContext{Size: 10}
	res, err := l.UpdateContext(ctx, mc)
	if msgs, _ := mc.Messages(ctx); err != nil || len(msgs) != 0 || len(res.Memories.Results) != 0 {
		t.Fatalf("empty memory changed the context: %v %v", msgs, err)
	}
	l.Add(ctx, Content{Content: "User prefers formal language", MimeType: TextPlain})
	l.Add(ctx, Content{Content: map[string]any{"b": 1, "a": "x"}, MimeType: JSON})
	res, err = l.UpdateContext(ctx, mc)
	if err != nil || len(res.Memories.Results) != 2 {
		t.Fatal(res, err)
	}
	msgs, _ := mc.Messages(ctx)
	want := "\nRelevant memory content (in chronological order):\n1. User prefers formal language\n2. {\"a\":\"x\",\"b\":1}\n"
	if len(msgs) != 1 || msgs[0].Role != "system" || msgs[0].Content != want {
		t.Fatalf("got %q, want %q", msgs[0].Content, want)
	}
	l.SetContents([]Content{{Content: "New preference", MimeType: TextPlain}})
	if q, _ := l.Query(ctx, "anything"); len(q.Results) != 1 || q.Results[0].Content != "New preference" {
		t.Fatalf("after SetContents: %+v", q)
	}
	l.Clear(ctx)
	if len(l.Contents()) != 0 {
		t.Fatal("Clear left contents")
	}
}

func TestVectorMemory(t *testing.T) {
	dir := t.TempDir()
	v, err := OpenVector(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"source": "onboarding"}
	v.Add(ctx, Content{Content: "The user's favourite programming language is Go", MimeType: TextPlain, Metadata: meta})
	v.Add(ctx, Content{Content: map[string]any{"Timezone": "Europe/Paris", "Units": "Metric"}, MimeType: JSON})
	v.Add(ctx, Content{Content: "Meetings are never scheduled on Fridays", MimeType: Markdown})
	if len(meta) != 1 {
		t.Fatalf("Add changed the caller's metadata: %v", meta)
	}
	if err := v.Add(ctx, Content{Content: []byte{0x89, 0x50}, MimeType: "image/png"}); !errors.Is(err, ErrNotEmbeddable) {
		t.Fatalf("image: %v", err)
	}
	if err := v.Add(ctx, Content{Content: "   ", MimeType: TextPlain}); !errors.Is(err, ErrNotEmbeddable) {
		t.Fatalf("blank: %v", err)
	}
	v.Close()

	v, err = OpenVector(dir, &VectorOptions{K: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	res, err := v.Query(ctx, "which programming language does the user like")
	if err != nil || len(res.Results) != 1 || res.Results[0].Content != "The user's favourite programming language is Go" {
		t.Fatalf("after reopen: %+v, %v", res, err)
	}
	if s, _ := res.Results[0].Metadata["score"].(float64); s <= 0.5 || s > 1 || res.Results[0].Metadata["source"] != "onboarding" {
		t.Fatalf("metadata %v", res.Results[0].Metadata)
	}
	js, _ := v.Query(ctx, Content{Content: "timezone Europe/Paris", MimeType: TextPlain})
	if want := map[string]any{"Timezone": "Europe/Paris", "Units": "Metric"}; len(js.Results) != 1 || !reflect.DeepEqual(js.Results[0].Content, want) {
		t.Fatalf("JSON content came back as %#v", js.Results)
	}

	mc := &BufferedContext{}
	mc.AddMessage(ctx, Message{Role: "user", Content: "Can we meet on Friday?"})
	up, err := v.UpdateContext(ctx, mc)
	if err != nil || len(up.Memories.Results) != 1 {
		t.Fatal(up, err)
	}
	msgs, _ := mc.Messages(ctx)
	if want := "\nRelevant memory content:\n1. Meetings are never scheduled on Fridays"; msgs[1].Content != want {
		t.Fatalf("got %q, want %q", msgs[1].Content, want)
	}
	strict, _ := OpenVector("", &VectorOptions{Threshold: new(float32(0.99))})
	defer strict.Close()
	strict.Add(ctx, Content{Content: "alpha beta", MimeType: TextPlain})
	if r, _ := strict.Query(ctx, "gamma delta"); len(r.Results) != 0 {
		t.Fatalf("threshold let through %+v", r)
	}
	if err := v.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := v.Query(ctx, "Go"); len(r.Results) != 0 {
		t.Fatal("Clear left contents")
	}
}

func TestConcurrentMemories(t *testing.T) {
	v, _ := OpenVector("", nil)
	defer v.Close()
	l := NewListMemory("l")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				c := Content{Content: fmt.Sprintf("fact %d of writer %d", i, g), MimeType: TextPlain}
				for _, m := range []Memory{v, l} {
					if err := m.Add(ctx, c); err != nil {
						t.Error(err)
						return
					}
					m.Query(ctx, "fact")
					m.UpdateContext(ctx, &BufferedContext{})
				}
			}
		}(g)
	}
	wg.Wait()
	if len(l.Contents()) != 100 {
		t.Fatalf("%d contents", len(l.Contents()))
	}
}

// TestVectorMemoryNonFiniteNumbers checks that NaN and infinities, as the
// score threshold or inside what Add stores, are errors rather than a
// threshold that silently keeps or drops everything.
func TestVectorMemoryNonFiniteNumbers(t *testing.T) {
	for _, tt := range []struct {
		name      string
		threshold float32
	}{
		{"NaN", float32(math.NaN())},
		{"+Inf", float32(math.Inf(1))},
		{"-Inf", float32(math.Inf(-1))},
	} {
		t.Run("threshold "+tt.name, func(t *testing.T) {
			v, err := OpenVector("", &VectorOptions{Threshold: new(float32(tt.threshold))})
			if err == nil {
				v.Close()
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("OpenVector = %v, want ErrInvalid", err)
			}
		})
	}
	v, err := OpenVector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, tt := range []struct {
		name string
		c    Content
	}{
		{"NaN in metadata", Content{Content: "the lake is cold", MimeType: TextPlain, Metadata: map[string]any{"temp": math.NaN()}}},
		{"+Inf deep in metadata", Content{Content: "the lake is cold", MimeType: TextPlain, Metadata: map[string]any{"a": []any{math.Inf(1)}}}},
		{"NaN in JSON content", Content{Content: map[string]any{"temp": math.NaN()}, MimeType: JSON}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := v.Add(ctx, tt.c); !errors.Is(err, ErrInvalid) {
				t.Errorf("Add = %v, want ErrInvalid", err)
			}
		})
	}
	if r, _ := v.Query(ctx, "lake"); len(r.Results) != 0 {
		t.Fatalf("rejected contents were stored: %+v", r.Results)
	}
}

// TestVectorMemoryDeeplyNestedMetadata adds contents whose metadata nests
// deeper than the database stores: Add must fail and store nothing, and
// the memory must stay usable and reopen.
func TestVectorMemoryDeeplyNestedMetadata(t *testing.T) {
	dir := t.TempDir()
	v, err := OpenVector(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Add(ctx, Content{Content: "the lake is cold in May", MimeType: TextPlain}); err != nil {
		t.Fatal(err)
	}
	var unmarshalled map[string]any
	doc := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	if err := json.Unmarshal([]byte(doc), &unmarshalled); err != nil {
		t.Fatal(err)
	}
	deep := map[string]any{"leaf": 1.0}
	for range 63 {
		deep = map[string]any{"a": deep}
	}
	cycle := map[string]any{"source": "x"}
	cycle["self"] = cycle
	for _, tt := range []struct {
		name string
		meta map[string]any
	}{
		{"10,000 levels, as json.Unmarshal returns them", unmarshalled},
		{"64 levels", deep},
		{"a map that contains itself", cycle},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := v.Add(ctx, Content{Content: "the river is warm in August", MimeType: TextPlain, Metadata: tt.meta})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "metadata") {
				t.Errorf("Add = %v, want ErrInvalid naming the metadata", err)
			}
		})
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	v, err = OpenVector(dir, &VectorOptions{K: 5})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer v.Close()
	res, err := v.Query(ctx, "how warm is the water")
	if err != nil || len(res.Results) != 1 || res.Results[0].Content != "the lake is cold in May" {
		t.Fatalf("after reopen: %+v, %v", res, err)
	}
}

// TestVectorMemoryEmbedderMismatch reopens a memory with another embedder:
// that is embed.ErrMismatch, and the stored contents stay as they were.
func TestVectorMemoryEmbedderMismatch(t *testing.T) {
	dir := t.TempDir()
	v, err := OpenVector(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	v.Add(ctx, Content{Content: "the lake is cold in May", MimeType: TextPlain})
	v.Close()
	other, _ := embed.NewHashing(64)
	if _, err := OpenVector(dir, &VectorOptions{Embedder: other}); !errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("another embedder = %v, want embed.ErrMismatch", err)
	}
	v, err = OpenVector(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if res, err := v.Query(ctx, "lake"); err != nil || len(res.Results) != 1 {
		t.Fatalf("after the refused open: %+v, %v", res, err)
	}
}

// TestNewVectorSharesDB builds a memory on a database the caller owns:
// Close leaves the database open, and another memory on it sees the
// contents.
func TestNewVectorSharesDB(t *testing.T) {
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := NewVector(context.Background(), db.Store(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Add(ctx, Content{Content: "the lake is cold in May", MimeType: TextPlain}); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	v, err = NewVector(context.Background(), db.Store(), nil)
	if err != nil {
		t.Fatalf("NewVector after Close: %v (the database was closed?)", err)
	}
	defer v.Close()
	if res, err := v.Query(ctx, "lake"); err != nil || len(res.Results) != 1 {
		t.Fatalf("on the shared database: %+v, %v", res, err)
	}
	if _, err := NewVector(context.Background(), nil, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NewVector(nil) = %v, want ErrInvalid", err)
	}
}

// cancelledAfter is a context whose Err is nil for its first n calls and
// context.Canceled after.
type cancelledAfter struct {
	context.Context
	n *int
}

func (c cancelledAfter) Err() error {
	if *c.n > 0 {
		*c.n--
		return nil
	}
	return context.Canceled
}

// TestClearCancelledPartWay: a Clear whose context runs out after the
// drop still leaves the memory with a collection: later calls work.
func TestClearCancelledPartWay(t *testing.T) {
	v, err := OpenVector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Add(ctx, Content{Content: "apples", MimeType: "text/plain"}); err != nil {
		t.Fatal(err)
	}
	n := 1
	v.Clear(cancelledAfter{context.Background(), &n})
	if err := v.Add(ctx, Content{Content: "pears", MimeType: "text/plain"}); err != nil {
		t.Fatalf("add after a cancelled clear: %v", err)
	}
	if _, err := v.Query(ctx, "pears"); err != nil {
		t.Fatalf("query after a cancelled clear: %v", err)
	}
}
