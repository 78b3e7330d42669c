package docpath

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var errBad = errors.New("bad path")

func TestClean(t *testing.T) {
	good := []struct{ in, logical, rel string }{
		{"a.md", "/a.md", "a.md"},
		{"/a.md", "/a.md", "a.md"},
		{"/./a.md", "/a.md", "a.md"},
		{"a//b.md", "/a/b.md", "a/b.md"},
		{"/memories/notes.md", "/memories/notes.md", "memories/notes.md"},
		{"/a/b..c.md", "/a/b..c.md", "a/b..c.md"},
	}
	for _, tt := range good {
		t.Run(tt.in, func(t *testing.T) {
			logical, rel, err := Clean(tt.in, errBad)
			if err != nil || logical != tt.logical || rel != tt.rel {
				t.Fatalf("Clean(%q) = %q, %q, %v; want %q, %q", tt.in, logical, rel, err, tt.logical, tt.rel)
			}
		})
	}
	bad := []string{"", " ", "/", "//", "a/", "../a.md", "/a/../../b.md", "a/..", "/.hidden", "/a/.git/config",
		`a\b.md`, "a\x00b", "a\nb", "%2e%2e/a", "a%2Fb", "C:/a.md", "//server/a", "\xff.md", strings.Repeat("a", MaxLength+1)}
	for _, p := range bad {
		t.Run(p, func(t *testing.T) {
			if logical, _, err := Clean(p, errBad); !errors.Is(err, errBad) {
				t.Fatalf("Clean(%q) = %q, %v; want an error wrapping errBad", p, logical, err)
			}
		})
	}
}

func TestFolders(t *testing.T) {
	if got := Folders("/a/b/c.md"); !slices.Equal(got, []string{"/a", "/a/b"}) {
		t.Fatalf("Folders = %q", got)
	}
	if got := Folders("/c.md"); len(got) != 0 {
		t.Fatalf("Folders(/c.md) = %q", got)
	}
}
