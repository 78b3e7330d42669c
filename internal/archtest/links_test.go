package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks every relative link of README.md and docs/**/*.md (outside
// code): the file it names exists, and an anchor ("file.md#section" or
// "#section") names a heading of that file, as GitHub makes anchors.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md")}
	err = filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		a := headingAnchors(string(b))
		anchors[path] = a
		return a
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range links(string(b)) {
			target, anchor, _ := strings.Cut(l.target, "#")
			path := f
			if target != "" {
				path = filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %q: no such file", rel, l.line, l.target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s:%d: link to %q: no heading makes the anchor #%s", rel, l.line, l.target, anchor)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the checker reads nothing")
	}
	t.Logf("%d relative links checked in %d files", checked, len(files))
}

type link struct {
	target string
	line   int
}

var (
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineRE = regexp.MustCompile("`[^`]*`")
)

// links returns the relative link targets of a markdown text, outside
// fenced code blocks and inline code.
func links(text string) []link {
	var out []link
	fenced := false
	for i, ln := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(ln), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		ln = inlineRE.ReplaceAllString(ln, "")
		for _, m := range linkRE.FindAllStringSubmatch(ln, -1) {
			t := m[1]
			if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			out = append(out, link{t, i + 1})
		}
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a markdown text's
// headings: lower case, punctuation other than '-' and '_' dropped,
// spaces made '-', repeats numbered -1, -2, ...
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, ln := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(ln), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(ln, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(ln, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

// TestDocLinkChecker checks the checker: links in code are skipped, and
// anchors are made as GitHub makes them.
func TestDocLinkChecker(t *testing.T) {
	got := links("see [x](a.md#b) and `[y](c.md)`, [w](https://example.com)\n```\n[z](d.md)\n```\n[v](#top)")
	if len(got) != 2 || got[0].target != "a.md#b" || got[1].target != "#top" || got[1].line != 5 {
		t.Fatalf("links = %+v", got)
	}
	a := headingAnchors("# Many users, updates: v2\n## A new embedder\n## A new embedder\n```\n# not a heading\n```")
	for _, want := range []string{"many-users-updates-v2", "a-new-embedder", "a-new-embedder-1"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a line in a code block made an anchor")
	}
}
