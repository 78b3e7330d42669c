package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "TestDemoREADME: write the demo's output into README.md")

// The lines around the demo's output in README.md.
const (
	demoStart = "<!-- demo-output:start -->"
	demoEnd   = "<!-- demo-output:end -->"
)

// TestDemo runs the demo into a kept directory and checks that each adapter
// recalled what it should, that the memories were found again after a
// reopen, and that a used directory is refused.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"demo", "--keep", dir}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	s := out.String()
	for _, want := range []string{
		`get_weather {"city":"Paris"}, similarity`,
		`1. "Paul works at Google"`, `2. "Paul is married to Sarah"`,
		`"Use detailed responses."`, "finds /preferences.md.", "/travel/lisbon.md:",
		"user: My locker code is 4711.",
		"The user's favourite programming language is Go, score",
		"3 tool calls, 3 facts,\n   2 documents and 10 conversation messages.",
		demoExample, "embed.NewOpenAI", "embed.NewOllama", "it matches words, not\nmeaning.",
		"The database is kept in " + dir,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q:\n%s", want, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "db")); err != nil {
		t.Fatalf("--keep did not keep the database: %v", err)
	}
	if _, err := os.Stat(filepath.Join("..", "..", demoExample)); err != nil {
		t.Errorf("the demo points to %s: %v", demoExample, err)
	}
	// Again into the same directory: refused, nothing written.
	before, _ := os.ReadDir(dir)
	out.Reset()
	errOut.Reset()
	if code := run(t.Context(), []string{"demo", "--keep", dir}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "not empty") {
		t.Fatalf("demo --keep into a used directory: exit %d: %s", code, errOut.String())
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Fatalf("the refused demo changed %s: %d entries, %d before", dir, len(after), len(before))
	}
}

// TestDemoREADME checks that README.md quotes the demo's output as it is:
// the one fenced block between demoStart and demoEnd. With -update it
// writes the output there instead.
func TestDemoREADME(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"demo"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	got := out.String()
	if tmp := os.TempDir(); strings.Contains(got, tmp) {
		t.Errorf("the demo's output names the temporary directory %s, which changes from run to run:\n%s", tmp, got)
	}
	path := filepath.Join("..", "..", "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, quoted, after, err := demoBlock(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if *update {
		if err := os.WriteFile(path, []byte(before+got+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if quoted != got {
		t.Errorf("README.md quotes another output of `mnemo demo` than it prints (%s);\n"+
			"refresh it with: go test ./cmd/mnemo -run TestDemoREADME -update\n\ndemo prints:\n%s",
			demoDiff(quoted, got), got)
	}
}

// demoBlock splits readme around the contents of the one fenced block
// between demoStart and demoEnd: before ends with the opening fence's
// line, after starts with the closing fence.
func demoBlock(readme string) (before, quoted, after string, err error) {
	if strings.Count(readme, demoStart) != 1 || strings.Count(readme, demoEnd) != 1 {
		return "", "", "", fmt.Errorf("want %s and %s once each", demoStart, demoEnd)
	}
	i := strings.Index(readme, demoStart) + len(demoStart)
	j := strings.Index(readme, demoEnd)
	if j < i {
		return "", "", "", fmt.Errorf("%s comes before %s", demoEnd, demoStart)
	}
	section := readme[i:j]
	open := strings.Index(section, "```")
	if open < 0 || strings.TrimSpace(section[:open]) != "" {
		return "", "", "", fmt.Errorf("want a fenced block right after %s", demoStart)
	}
	nl := strings.IndexByte(section[open:], '\n')
	if nl < 0 {
		return "", "", "", fmt.Errorf("the fence after %s does not end its line", demoStart)
	}
	body := open + nl + 1
	end := strings.LastIndex(section, "\n```")
	if end < body-1 || strings.TrimSpace(section[end+4:]) != "" {
		return "", "", "", fmt.Errorf("want the fenced block to end right before %s", demoEnd)
	}
	if strings.Contains(section[body:end+1], "```") {
		return "", "", "", fmt.Errorf("want exactly one fenced block between %s and %s", demoStart, demoEnd)
	}
	return readme[:i+body], section[body : end+1], section[end+1:] + readme[j:], nil
}

// demoDiff names the first line where quoted and got differ.
func demoDiff(quoted, got string) string {
	q, g := strings.Split(quoted, "\n"), strings.Split(got, "\n")
	for i := range max(len(q), len(g)) {
		var a, b string
		if i < len(q) {
			a = q[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: README has %q, the demo prints %q", i+1, a, b)
		}
	}
	return "they differ"
}
