// Package archtest checks that docs/architecture.md describes the module's
// package graph as go list reports it, so that the drawing and the table
// there cannot drift from the code. It holds only a test.
package archtest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mnemodb/mnemo"

// TestArchitectureDocMatchesGoList compares the table of
// docs/architecture.md ("| `package` | `imports`, ... | why |") with the
// imports of the module's packages (tests excluded), ours only.
func TestArchitectureDocMatchesGoList(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc := documented(t, filepath.Join(root, "docs", "architecture.md"))
	actual := listed(t, root)
	for pkg, want := range actual {
		got, ok := doc[pkg]
		if !ok {
			t.Errorf("docs/architecture.md has no row for %s (imports %v)", pkg, want)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: docs/architecture.md says it imports %v; go list says %v", pkg, got, want)
		}
	}
	for pkg := range doc {
		if _, ok := actual[pkg]; !ok {
			t.Errorf("docs/architecture.md has a row for %s, which go list does not name", pkg)
		}
	}
}

// documented reads the table rows of the architecture doc: package ->
// sorted imports, both relative to the module ("." for the root).
func documented(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cells[1]), "`")
		imports := []string{}
		for _, imp := range strings.Split(cells[2], ",") {
			if imp = strings.Trim(strings.TrimSpace(imp), "`"); imp != "" && imp != "-" {
				imports = append(imports, imp)
			}
		}
		slices.Sort(imports)
		rows[pkg] = imports
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s holds no package table", path)
	}
	return rows
}

// listed returns the module's packages and their imports within the
// module, as go list reports them.
func listed(t *testing.T, root string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		imports := []string{}
		for _, imp := range fields[1:] {
			if r, ok := rel(imp); ok {
				imports = append(imports, r)
			}
		}
		slices.Sort(imports)
		pkgs[pkg] = imports
	}
	return pkgs
}
