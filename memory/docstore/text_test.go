package docstore

import (
	"errors"
	"reflect"
	"testing"

	"github.com/mnemodb/mnemo/memory/store"
)

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
			d, err := Open(dir, &Options{Semantic: true})
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
			if err := d.Store(ctx, " "); !errors.Is(err, store.ErrEmpty) {
				t.Fatalf("Store(blank) = %v, want store.ErrEmpty", err)
			}
		})
	}
}
