// Package docpath holds the rules of logical document paths ("/a/b.md")
// that the document memories share: package docstore, which keeps
// documents in a directory or in memory, and package mcptools, which
// keeps them in a collection. One set of rules, so a path one accepts the
// other accepts too, and each reports a bad path with its own sentinel.
package docpath

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxLength is the longest path Clean accepts, in bytes.
const MaxLength = 1024

// Clean validates the logical path p and returns it in canonical form
// ("/a/b.md") and relative to the root ("a/b.md"). A bad path is an error
// wrapping bad that says what is wrong: empty, ending with "/" (a folder),
// longer than MaxLength, not UTF-8, with a backslash, a control
// character, a percent-encoded dot, slash or backslash, a drive letter, a
// leading "//", a ".." segment, or a segment starting with a dot.
// Spellings of one path clean to one form: "a.md", "/a.md" and "/./a.md"
// are "/a.md", and "a//b.md" is "/a/b.md".
func Clean(p string, bad error) (logical, rel string, err error) {
	fail := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("%w: %q: %s", bad, p, why)
	}
	lower := strings.ToLower(p)
	switch {
	case strings.TrimSpace(p) == "" || strings.Trim(p, "/") == "":
		return fail("empty")
	case strings.HasSuffix(p, "/"):
		return fail("ends with a slash, which names a folder, not a document")
	case len(p) > MaxLength:
		return fail(fmt.Sprintf("longer than %d bytes", MaxLength))
	case !utf8.ValidString(p):
		return fail("not valid UTF-8")
	case strings.ContainsAny(p, "\\"):
		return fail("backslashes are not allowed")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fail("control characters are not allowed")
	case strings.Contains(lower, "%2e") || strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c"):
		return fail("percent-encoded dots and slashes are not allowed")
	case len(p) >= 2 && p[1] == ':':
		return fail("drive letters are not allowed")
	case strings.HasPrefix(p, "//"):
		return fail("network paths are not allowed")
	}
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		switch {
		case seg == "..":
			return fail(`".." is not allowed`)
		case seg == "" || seg == ".":
		case strings.HasPrefix(seg, "."):
			return fail("names starting with a dot are reserved")
		}
	}
	rel = path.Clean(strings.Trim(p, "/"))
	return "/" + rel, rel, nil
}

// Folders returns the folders above a logical path, outermost first:
// "/a/b/c.md" -> "/a", "/a/b".
func Folders(logical string) []string {
	var out []string
	for i := 1; i < len(logical); i++ {
		if logical[i] == '/' {
			out = append(out, logical[:i])
		}
	}
	return out
}
