package toolmem

import (
	"errors"
	"testing"
)

// TestTextWithoutLetters: what an agent gets for the text it has (see
// Text in the package doc). Before, "?" and emoji were ErrEmptyText
// everywhere and an empty question was an error.
func TestTextWithoutLetters(t *testing.T) {
	m := mustOpen(t, "", nil)
	defer m.Close()
	for _, q := range []string{"?", "🙂", "!!!"} {
		if _, err := m.Store(ctx, Entry{ID: q, Question: q, ToolName: "ask_user"}); err != nil {
			t.Fatalf("Store(%q) = %v", q, err)
		}
	}
	if _, err := m.SaveText(ctx, "🙂🙂"); err != nil {
		t.Fatalf("SaveText(emoji) = %v", err)
	}
	for _, q := range []string{"?", "🙂", "!!!"} {
		got, err := m.Retrieve(ctx, q, nil)
		if err != nil || len(got) == 0 || got[0].ID != q || got[0].Similarity < 0.999 {
			t.Fatalf("Retrieve(%q) = %+v, %v; want the entry %q first", q, got, err, q)
		}
	}
	if got, err := m.SearchText(ctx, "🙂🙂", nil); err != nil || len(got) != 1 || got[0].Text != "🙂🙂" {
		t.Fatalf("SearchText(emoji) = %+v, %v", got, err)
	}
	for _, blank := range []string{"", " \n\t"} {
		if got, err := m.Retrieve(ctx, blank, &Search{Threshold: new(float32(0))}); err != nil || len(got) != 0 {
			t.Errorf("Retrieve(%q) = %+v, %v; want nothing and no error", blank, got, err)
		}
		if got, err := m.SearchText(ctx, blank, nil); err != nil || len(got) != 0 {
			t.Errorf("SearchText(%q) = %+v, %v; want nothing and no error", blank, got, err)
		}
		if _, err := m.Store(ctx, Entry{Question: blank}); !errors.Is(err, ErrEmptyText) {
			t.Errorf("Store(%q) = %v, want ErrEmptyText", blank, err)
		}
		if _, err := m.SaveText(ctx, blank); !errors.Is(err, ErrEmptyText) {
			t.Errorf("SaveText(%q) = %v, want ErrEmptyText", blank, err)
		}
	}
	if _, err := m.Retrieve(ctx, "", &Search{TopK: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a bad Search with an empty question = %v, want ErrInvalid", err)
	}
}
