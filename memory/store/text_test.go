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

// TestDocumentsTextWithoutLetters: full-text search is a plain substring
// search, as in the original, so "" matches every document (it was
// ErrEmpty); semantic search finds documents of symbols alone and nothing
// for an empty query.
func TestDocumentsTextWithoutLetters(t *testing.T) {
	for _, mode := range []string{"memory", "dir"} {
		t.Run(mode, func(t *testing.T) {
			dir := ""
			if mode == "dir" {
				dir = t.TempDir()
			}
			d, err := OpenDocuments(dir, &DocumentsOptions{Semantic: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			docs := map[string]string{"/b.md": "Why?", "/a.md": "Fine.", "/c.md": "🙂", "/empty.md": ""}
			for p, c := range docs {
				if err := d.Write(ctx, p, c); err != nil {
					t.Fatalf("Write(%s, %q) = %v", p, c, err)
				}
			}
			all := []Document{{"/a.md", "Fine."}, {"/b.md", "Why?"}, {"/c.md", "🙂"}, {"/empty.md", ""}}
			if got, err := d.SearchFullText(ctx, "", 0); err != nil || !reflect.DeepEqual(got, all) {
				t.Fatalf("SearchFullText(\"\") = %q, %v", got, err)
			}
			if got, err := d.SearchFullText(ctx, "", 2); err != nil || !reflect.DeepEqual(got, all[:2]) {
				t.Fatalf("SearchFullText(\"\", 2) = %q, %v", got, err)
			}
			if got, err := d.Search(ctx, "?", 0); err != nil || !reflect.DeepEqual(got, []string{"Why?"}) {
				t.Fatalf("Search(?) = %q, %v", got, err)
			}
			if got, err := d.SearchSemantic(ctx, "🙂", 1); err != nil || len(got) != 1 || got[0].Path != "/c.md" {
				t.Fatalf("SearchSemantic(emoji) = %q, %v", got, err)
			}
			if got, err := d.SearchSemantic(ctx, " ", 5); err != nil || len(got) != 0 {
				t.Fatalf("SearchSemantic(blank) = %q, %v; want nothing and no error", got, err)
			}
			if err := d.Store(ctx, " "); !errors.Is(err, ErrEmpty) {
				t.Fatalf("Store(blank) = %v, want ErrEmpty", err)
			}
		})
	}
}
