package chat

import (
	"errors"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

// TestDefaultNames: the defaults are the original's names. Before, a
// ListMemory made without a name was named "" and a VectorMemory's
// collection was "chat_memory".
func TestDefaultNames(t *testing.T) {
	if got := NewListMemory("").Name; got != "default_list_memory" {
		t.Errorf("NewListMemory(\"\").Name = %q, want default_list_memory", got)
	}
	if got := NewListMemory("prefs").Name; got != "prefs" {
		t.Errorf("NewListMemory(prefs).Name = %q", got)
	}
	v, err := OpenVector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Name() != "memory_store" {
		t.Errorf("default collection %q, want memory_store", v.Name())
	}
	if cs, err := v.db.Collections(ctx); err != nil || len(cs) != 1 || cs[0] != "memory_store" {
		t.Errorf("collections %q", cs)
	}
}

// TestLegacyDefaultCollection: a database made with the earlier default
// collection keeps its memories under the new default; one holding both
// uses the new default.
func TestLegacyDefaultCollection(t *testing.T) {
	dir := t.TempDir()
	old, err := OpenVector(dir, &VectorOptions{Collection: "chat_memory"})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Add(ctx, Content{Content: "The user's dog is called Rex", MimeType: TextPlain}); err != nil {
		t.Fatal(err)
	}
	old.Close()

	v, err := OpenVector(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name() != LegacyCollection {
		t.Fatalf("collection %q, want the earlier default kept", v.Name())
	}
	if res, err := v.Query(ctx, "dog"); err != nil || len(res.Results) != 1 {
		t.Fatalf("Query on the earlier default = %+v, %v", res, err)
	}
	if _, err := v.db.CreateCollection(ctx, DefaultCollection, mnemo.CollectionConfig{
		Dimension: v.space.Embedder().Dimension(), Metric: mnemo.Cosine, Embedder: v.space.Embedder().Identity()}); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v, err = OpenVector(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Name() != DefaultCollection {
		t.Fatalf("with both collections: %q, want %q", v.Name(), DefaultCollection)
	}
}

// TestVectorTextWithoutLetters: what VectorMemory does with the text an
// agent has (see Text in the package doc). Before, "?" could not be
// stored, and a last message "?" silently added nothing.
func TestVectorTextWithoutLetters(t *testing.T) {
	v, _ := OpenVector("", nil)
	defer v.Close()
	for _, s := range []string{"?", "🙂", "The user's dog is called Rex"} {
		if err := v.Add(ctx, Content{Content: s, MimeType: TextPlain}); err != nil {
			t.Fatalf("Add(%q) = %v", s, err)
		}
	}
	mc := &BufferedContext{}
	mc.AddMessage(ctx, Message{Role: "user", Content: "?"})
	res, err := v.UpdateContext(ctx, mc)
	if err != nil || len(res.Memories.Results) == 0 || res.Memories.Results[0].Content != "?" {
		t.Fatalf("UpdateContext after \"?\" = %+v, %v", res, err)
	}
	msgs, _ := mc.Messages(ctx)
	if len(msgs) != 2 || !strings.HasPrefix(msgs[1].Content, VectorHeader+"1. ?") {
		t.Fatalf("context after \"?\" = %q", msgs)
	}
	for _, blank := range []string{"", " \n"} {
		mc := &BufferedContext{}
		mc.AddMessage(ctx, Message{Role: "user", Content: blank})
		if res, err := v.UpdateContext(ctx, mc); err != nil || len(res.Memories.Results) != 0 {
			t.Errorf("UpdateContext after %q = %+v, %v; want nothing", blank, res, err)
		}
		if msgs, _ := mc.Messages(ctx); len(msgs) != 1 {
			t.Errorf("UpdateContext after %q added %q", blank, msgs[1:])
		}
		if res, err := v.Query(ctx, blank); err != nil || len(res.Results) != 0 {
			t.Errorf("Query(%q) = %+v, %v; want nothing and no error", blank, res, err)
		}
		if err := v.Add(ctx, Content{Content: blank, MimeType: TextPlain}); !errors.Is(err, ErrNotEmbeddable) {
			t.Errorf("Add(%q) = %v, want ErrNotEmbeddable", blank, err)
		}
	}
	l := NewListMemory("")
	if err := l.Add(ctx, Content{Content: "", MimeType: TextPlain}); err != nil {
		t.Errorf("ListMemory.Add(empty) = %v", err)
	}
}

// TestRendering pins the rendering table of the package doc.
func TestRendering(t *testing.T) {
	tests := []struct {
		name string
		c    Content
		want string // "" with wantErr
		err  error
	}{
		{"string", Content{Content: "Use formal language", MimeType: TextPlain}, "Use formal language", nil},
		{"JSON object", Content{Content: map[string]any{"b": 1, "a": []any{"x", true, nil}}, MimeType: JSON}, `{"a":["x",true,null],"b":1}`, nil},
		{"UTF-8 bytes", Content{Content: []byte("héllo"), MimeType: TextPlain}, "héllo", nil},
		{"image bytes", Content{Content: []byte("héllo"), MimeType: "image/png"}, "<6 bytes of image/png>", nil},
		{"binary bytes", Content{Content: []byte{0xff, 0}, MimeType: TextPlain}, "<2 bytes of text/plain>", nil},
		{"a number", Content{Content: 42, MimeType: TextPlain}, "", ErrInvalid},
		{"nil", Content{MimeType: TextPlain}, "", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewListMemory("")
			err := l.Add(ctx, tt.c)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("Add = %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			mc := &BufferedContext{}
			l.UpdateContext(ctx, mc)
			msgs, _ := mc.Messages(ctx)
			if want := ListHeader + "1. " + tt.want + "\n"; len(msgs) != 1 || msgs[0].Content != want {
				t.Fatalf("rendered %q, want %q", msgs, want)
			}
		})
	}
}
