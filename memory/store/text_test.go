package store

import (
	"errors"
	"reflect"
	"testing"
)

// TestSemanticTextWithoutLetters: facts of symbols or emoji alone are
// stored and found; an empty query finds nothing, without an error.
// Before, "?" was ErrEmpty and an empty query an error.
func TestSemanticTextWithoutLetters(t *testing.T) {
	s, _ := OpenSemantic("", nil)
	defer s.Close()
	for _, f := range []string{"Paul works at Google", "?", "🙂"} {
		if err := s.Store(ctx, f); err != nil {
			t.Fatalf("Store(%q) = %v", f, err)
		}
	}
	for _, q := range []string{"?", "🙂"} {
		if got, err := s.Search(ctx, q, 1); err != nil || !reflect.DeepEqual(got, []string{q}) {
			t.Fatalf("Search(%q) = %q, %v", q, got, err)
		}
	}
	for _, blank := range []string{"", "  "} {
		if got, err := s.Search(ctx, blank, 5); err != nil || len(got) != 0 {
			t.Errorf("Search(%q) = %q, %v; want nothing and no error", blank, got, err)
		}
		if got, err := s.SearchWithin(ctx, blank, 5, 2); err != nil || len(got) != 0 {
			t.Errorf("SearchWithin(%q) = %q, %v; want nothing and no error", blank, got, err)
		}
		if err := s.Store(ctx, blank); !errors.Is(err, ErrEmpty) {
			t.Errorf("Store(%q) = %v, want ErrEmpty", blank, err)
		}
	}
}
