// Package doctest checks every fenced code block of README.md and
// docs/**/*.md against the code, so that what a user copies works. It
// holds only tests.
//
// What each block's language tag gets:
//
//   - go: compiled and vetted. A block with a package clause is a file as
//     it stands; a block without one is a fragment: top-level declarations
//     (it starts with func, type, var or const) go into a file as they are,
//     statements into the body of a function. A fragment's imports are
//     inferred from the package names it uses (see imports). Every block is
//     a package of its own in one generated directory inside this package
//     (its name starts with "_", so ./... never sees it), type-checked by
//     one go vet run, and removed afterwards.
//   - sh, bash, console: every command that runs mnemo (mnemo ... or go run
//     ./cmd/mnemo ...) names a subcommand of the CLI and passes only flags
//     that subcommand has, as its -h output lists them; every go test
//     command names packages go list resolves, and its -run and -bench
//     patterns match a function of those packages' test files. In a console
//     block only the lines that start with "$ " are commands; the rest is
//     their output.
//   - json parses as one JSON value; jsonl as one per non-blank line.
//   - text and output are output (or drawings) and are exempt.
//
// Any other tag, and a block with no tag, fails, so that a new kind of
// block cannot slip past. A block may opt out with the HTML comment
// "<!-- doctest: skip REASON -->" on the line before its fence; the test
// logs every reason it saw.
package doctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// block is one fenced code block of a markdown file.
type block struct {
	file string // relative to the module root
	line int    // of the opening fence, from 1
	lang string
	text string
	skip string // the reason of a doctest: skip comment, if any
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var skipRE = regexp.MustCompile(`^<!--\s*doctest:\s*skip\s+(.+?)\s*-->$`)

// parseBlocks returns the fenced blocks of a markdown text. A fence may be
// indented (inside a list item); the block's lines lose that indentation.
func parseBlocks(file, text string) ([]block, error) {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " \t")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		b := block{file: file, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		if i > 0 {
			if m := skipRE.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.skip = m[1]
			}
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.HasPrefix(strings.TrimLeft(lines[i], " \t"), "```") {
				closed = true
				break
			}
			ln := lines[i]
			if len(ln) >= indent && strings.TrimSpace(ln[:indent]) == "" {
				ln = ln[indent:]
			}
			body = append(body, ln)
		}
		if !closed {
			return out, fmt.Errorf("%s:%d: a fenced block is never closed", file, b.line)
		}
		b.text = strings.Join(body, "\n")
		out = append(out, b)
	}
	return out, nil
}

// docFiles returns README.md and every .md file under docs/, relative to
// root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func allBlocks(t *testing.T, root string) []block {
	t.Helper()
	var out []block
	for _, f := range docFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseBlocks(f, string(b))
		if err != nil {
			t.Error(err)
		}
		out = append(out, blocks...)
	}
	return out
}

// TestDocBlocks checks every fenced block of README.md and docs/ by its
// language tag (see the package comment).
func TestDocBlocks(t *testing.T) {
	root := moduleRoot(t)
	blocks := allBlocks(t, root)
	if len(blocks) == 0 {
		t.Fatal("no fenced blocks found: the test reads nothing")
	}
	var goBlocks, shBlocks []block
	counts := map[string]int{}
	for _, b := range blocks {
		if b.skip != "" {
			t.Logf("%s: skipped (%s block): %s", b, b.lang, b.skip)
			counts["skipped"]++
			continue
		}
		counts[b.lang]++
		switch b.lang {
		case "go":
			goBlocks = append(goBlocks, b)
		case "sh", "bash", "console":
			shBlocks = append(shBlocks, b)
		case "json":
			if !json.Valid([]byte(b.text)) {
				t.Errorf("%s: the json block does not parse", b)
			}
		case "jsonl":
			for i, ln := range strings.Split(b.text, "\n") {
				if strings.TrimSpace(ln) != "" && !json.Valid([]byte(ln)) {
					t.Errorf("%s: line %d of the jsonl block does not parse: %s", b, i+1, ln)
				}
			}
		case "text", "output":
		case "":
			t.Errorf("%s: a block with no language tag; tag it (go, sh, console, json, jsonl, text, output)", b)
		default:
			t.Errorf("%s: language tag %q is not one the doctest checks (go, sh, bash, console, json, jsonl, text, output)", b, b.lang)
		}
	}
	t.Logf("blocks: %v", counts)
	t.Run("go", func(t *testing.T) { checkGo(t, root, goBlocks) })
	t.Run("shell", func(t *testing.T) { checkShell(t, root, shBlocks) })
}

// checkGo writes each block as a package of a generated directory inside
// this package and type-checks and vets them all with one go vet.
func checkGo(t *testing.T, root string, blocks []block) {
	if len(blocks) == 0 {
		return
	}
	gen, err := os.MkdirTemp(".", "_gen")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(gen)
	dirs := map[string]block{}
	var pkgs []string
	for i, b := range blocks {
		dir := fmt.Sprintf("b%03d", i)
		if err := os.Mkdir(filepath.Join(gen, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		src := goSource(b.text)
		if err := os.WriteFile(filepath.Join(gen, dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs[dir] = b
		pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join(gen, dir)))
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	// Name the markdown block each message is about.
	re := regexp.MustCompile(`(?:^|[\s/])(b\d{3})/main\.go:(\d+)`)
	reported := false
	for _, ln := range strings.Split(string(out), "\n") {
		m := re.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		t.Errorf("%s (go block; generated line %s): %s", dirs[m[1]], m[2], strings.TrimSpace(ln))
		reported = true
	}
	if !reported {
		t.Errorf("go vet of the go blocks failed: %v\n%s", err, out)
	}
}

// goSource makes a Go file of a block: as it stands when it has a package
// clause, else wrapped (see the package comment). A fragment may start
// with its own import declarations; the imports it leaves out are
// inferred.
func goSource(text string) string {
	if regexp.MustCompile(`(?m)^package \w+`).MatchString(text) {
		return text
	}
	own, rest := splitImports(text)
	var b strings.Builder
	b.WriteString("package main\n\n")
	b.WriteString(own)
	if imps := imports(rest, own); len(imps) > 0 {
		b.WriteString("import (\n")
		for _, p := range imps {
			fmt.Fprintf(&b, "\t%q\n", p)
		}
		b.WriteString(")\n\n")
	}
	if isDecl(rest) {
		b.WriteString(rest)
		if !regexp.MustCompile(`(?m)^func main\(\)`).MatchString(rest) {
			b.WriteString("\n\nfunc main() {}\n")
		}
		return b.String()
	}
	b.WriteString("func main() {\n")
	b.WriteString(rest)
	b.WriteString("\n}\n")
	return b.String()
}

// splitImports returns a fragment's leading import declarations (with
// the comments and blank lines before them) and the rest.
func splitImports(text string) (imports, rest string) {
	lines := strings.Split(text, "\n")
	end := 0 // lines before end are imports
	inBlock := false
	for i, ln := range lines {
		t := strings.TrimSpace(ln)
		switch {
		case inBlock:
			if t == ")" {
				inBlock = false
				end = i + 1
			}
		case strings.HasPrefix(t, "import ("):
			inBlock = true
		case strings.HasPrefix(t, "import "):
			end = i + 1
		case t == "" || strings.HasPrefix(t, "//"):
		default:
			return strings.Join(lines[:end], "\n") + "\n\n", strings.Join(lines[end:], "\n")
		}
	}
	return strings.Join(lines[:end], "\n") + "\n\n", strings.Join(lines[end:], "\n")
}

// isDecl reports whether a fragment's first line of code (past comments)
// starts a top-level declaration.
func isDecl(text string) bool {
	for _, ln := range strings.Split(text, "\n") {
		t := strings.TrimSpace(ln)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		return regexp.MustCompile(`^(func|type|var|const)\s`).MatchString(t)
	}
	return false
}

// importPaths maps the package names a fragment may use to their import
// paths: the module's packages and the standard ones the docs use.
var importPaths = map[string]string{
	"mnemo":       "github.com/mnemodb/mnemo",
	"engine":      "github.com/mnemodb/mnemo/engine",
	"index":       "github.com/mnemodb/mnemo/index",
	"postgres":    "github.com/mnemodb/mnemo/postgres",
	"toolmem":     "github.com/mnemodb/mnemo/memory/toolmem",
	"store":       "github.com/mnemodb/mnemo/memory/store",
	"docstore":    "github.com/mnemodb/mnemo/memory/docstore",
	"chat":        "github.com/mnemodb/mnemo/memory/chat",
	"window":      "github.com/mnemodb/mnemo/memory/window",
	"embed":       "github.com/mnemodb/mnemo/memory/embed",
	"scope":       "github.com/mnemodb/mnemo/memory/scope",
	"reembed":     "github.com/mnemodb/mnemo/memory/reembed",
	"mcptools":    "github.com/mnemodb/mnemo/memory/mcptools",
	"vectorstore": "github.com/mnemodb/mnemo/memory/vectorstore",
	"metrics":     "github.com/mnemodb/mnemo/metrics",
	"simd":        "github.com/mnemodb/mnemo/simd",
	"context":     "context",
	"errors":      "errors",
	"fmt":         "fmt",
	"log":         "log",
	"slog":        "log/slog",
	"sync":        "sync",
	"http":        "net/http",
	"os":          "os",
	"time":        "time",
}

// imports returns the import paths of the packages a fragment uses, by the
// names in importPaths followed by a dot, but for those its own import
// declarations (own) already name.
func imports(text, own string) []string {
	var out []string
	text = codeOnly(text)
	for name, path := range importPaths {
		if strings.Contains(own, `"`+path+`"`) || regexp.MustCompile(`\b`+name+` "`).MatchString(own) {
			continue
		}
		if regexp.MustCompile(`(^|[^\w.])` + name + `\.\w`).MatchString(text) {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
}

var (
	stringRE  = regexp.MustCompile("\"(?:[^\"\\\\\n]|\\\\.)*\"|`[^`]*`")
	commentRE = regexp.MustCompile(`//[^\n]*`)
)

// codeOnly returns Go text without its string literals and comments, so
// that a package named only in them ("// or postgres.Open(...)") is not
// imported.
func codeOnly(text string) string {
	return commentRE.ReplaceAllString(stringRE.ReplaceAllString(text, `""`), "")
}

// command is one shell command of a block, split into words.
type command struct {
	line int // within the block, from 1
	args []string
}

// commands returns the commands of a shell block: lines joined at a
// trailing backslash, split at |, &&, || and ;, environment assignments
// dropped from the front. In a console block only "$ " lines count.
func commands(lang, text string) []command {
	var out []command
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i
		ln := lines[i]
		if lang == "console" {
			if !strings.HasPrefix(ln, "$ ") {
				continue
			}
			ln = strings.TrimPrefix(ln, "$ ")
		}
		for strings.HasSuffix(ln, "\\") && i+1 < len(lines) {
			i++
			ln = strings.TrimSuffix(ln, "\\") + " " + lines[i]
		}
		for _, args := range splitCommands(ln) {
			for len(args) > 0 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(args[0]) {
				args = args[1:]
			}
			if len(args) > 0 {
				out = append(out, command{line: start + 1, args: args})
			}
		}
	}
	return out
}

// splitCommands splits a line into words as a POSIX shell would for simple
// commands (quotes, backslashes, a # comment), and into commands at the
// operators | || && ; &.
func splitCommands(ln string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	end := func() {
		flush()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(ln); i++ {
		c := ln[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(ln[i+1:], '\'')
			if j < 0 {
				j = len(ln) - i - 1
			}
			w.WriteString(ln[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(ln) && ln[i] != '"'; i++ {
				if ln[i] == '\\' && i+1 < len(ln) {
					i++
				}
				w.WriteByte(ln[i])
			}
		case c == '\\' && i+1 < len(ln):
			i++
			w.WriteByte(ln[i])
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			end()
			return cmds
		case c == '|' || c == ';' || c == '&':
			end()
			if i+1 < len(ln) && (ln[i+1] == '|' || ln[i+1] == '&') {
				i++
			}
		case c == '>' || c == '<':
			// A redirection: skip it and its target.
			flush()
			if i+1 < len(ln) && (ln[i+1] == '>' || ln[i+1] == '&') {
				i++
			}
			for i+1 < len(ln) && ln[i+1] == ' ' {
				i++
			}
			for i+1 < len(ln) && ln[i+1] != ' ' {
				i++
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	return cmds
}

// checkShell checks the mnemo and go test commands of the shell blocks.
func checkShell(t *testing.T, root string, blocks []block) {
	cli := &cliFlags{root: root, flags: map[string]map[string]bool{}}
	checked := 0
	for _, b := range blocks {
		for _, c := range commands(b.lang, b.text) {
			where := fmt.Sprintf("%s (line %d of the block)", b, c.line)
			args := c.args
			switch {
			case args[0] == "mnemo":
				cli.check(t, where, args[1:])
				checked++
			case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/mnemo":
				cli.check(t, where, args[3:])
				checked++
			case len(args) >= 2 && args[0] == "go" && args[1] == "test":
				checkGoTest(t, root, where, args[2:])
				checked++
			}
		}
	}
	t.Logf("%d mnemo and go test commands checked", checked)
}

// cliFlags knows the CLI's subcommands and their flags, read from the
// usage texts of a binary built once.
type cliFlags struct {
	root     string
	once     sync.Once
	bin      string
	commands map[string]bool
	flags    map[string]map[string]bool // subcommand -> flag names
}

var flagLineRE = regexp.MustCompile(`^  (--?[a-zA-Z][\w-]*)`)

func (c *cliFlags) build(t *testing.T) {
	c.once.Do(func() {
		c.bin = filepath.Join(t.TempDir(), "mnemo")
		cmd := exec.Command("go", "build", "-o", c.bin, "./cmd/mnemo")
		cmd.Dir = c.root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/mnemo: %v\n%s", err, out)
		}
		out, _ := exec.Command(c.bin, "help").CombinedOutput()
		c.commands = map[string]bool{}
		inCommands := false
		for _, ln := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(ln, "Commands:") {
				inCommands = true
				continue
			}
			if inCommands && strings.TrimSpace(ln) == "" {
				break
			}
			if inCommands {
				f := strings.Fields(ln)
				if len(f) >= 2 && f[0] == "bench" {
					c.commands["bench "+f[1]] = true
				} else if len(f) >= 1 {
					c.commands[f[0]] = true
				}
			}
		}
		if len(c.commands) == 0 {
			t.Fatalf("mnemo help lists no commands:\n%s", out)
		}
	})
}

// flagsOf returns the flags of a subcommand, from its -h output.
func (c *cliFlags) flagsOf(sub string) map[string]bool {
	if f, ok := c.flags[sub]; ok {
		return f
	}
	out, _ := exec.Command(c.bin, append(strings.Fields(sub), "-h")...).CombinedOutput()
	f := map[string]bool{"-h": true, "--help": true, "-help": true}
	for _, ln := range strings.Split(string(out), "\n") {
		if m := flagLineRE.FindStringSubmatch(ln); m != nil {
			f[m[1]] = true
		}
	}
	c.flags[sub] = f
	return f
}

// check checks the arguments of one mnemo command line.
func (c *cliFlags) check(t *testing.T, where string, args []string) {
	c.build(t)
	if len(args) == 0 {
		return // mnemo alone prints the usage
	}
	sub := args[0]
	rest := args[1:]
	if sub == "bench" && len(rest) > 0 {
		sub, rest = "bench "+rest[0], rest[1:]
	}
	if sub == "help" || sub == "-h" || sub == "--help" || sub == "--version" {
		if sub == "help" && len(rest) > 0 && !c.commands[strings.Join(rest, " ")] && !c.commands[rest[0]] {
			t.Errorf("%s: mnemo help %s: no such command", where, strings.Join(rest, " "))
		}
		return
	}
	if !c.commands[sub] {
		t.Errorf("%s: mnemo %s: no such command (mnemo help lists %v)", where, sub, keys(c.commands))
		return
	}
	flags := c.flagsOf(sub)
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if !flags[name] {
			t.Errorf("%s: mnemo %s has no flag %s (mnemo help %s lists %v)", where, sub, name, sub, keys(flags))
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// goTestFlagsWithValue are the go test and build flags that take a value,
// so that the value is not read as a package.
var goTestFlagsWithValue = map[string]bool{
	"-run": true, "-bench": true, "-benchtime": true, "-count": true, "-cpu": true,
	"-timeout": true, "-tags": true, "-fuzz": true, "-fuzztime": true, "-fuzzminimizetime": true,
	"-skip": true, "-parallel": true, "-cpuprofile": true, "-memprofile": true, "-trace": true,
	"-coverprofile": true, "-o": true, "-blockprofile": true, "-mutexprofile": true, "-list": true,
}

// checkGoTest checks a go test command: its packages resolve, and its -run
// and -bench patterns each match a function of their test files.
func checkGoTest(t *testing.T, root, where string, args []string) {
	var pkgs []string
	patterns := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		name = "-" + strings.TrimLeft(name, "-")
		if !goTestFlagsWithValue[name] {
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		if name == "-run" || name == "-bench" || name == "-fuzz" {
			patterns[name] = val
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	dirs, err := listDirs(root, pkgs)
	if err != nil {
		t.Errorf("%s: go test %s: the packages do not resolve: %v", where, strings.Join(pkgs, " "), err)
		return
	}
	names := testFuncs(t, dirs)
	for flag, pat := range patterns {
		if flag == "-run" && (pat == "^$" || pat == "XXX" || pat == "NONE") {
			continue // runs no tests, deliberately
		}
		ok, err := matchesAny(pat, names, flag)
		if err != nil {
			t.Errorf("%s: go test %s %q: %v", where, flag, pat, err)
		} else if !ok {
			t.Errorf("%s: go test %s %q matches no function in %v", where, flag, pat, pkgs)
		}
	}
}

var (
	listMu    sync.Mutex
	listCache = map[string][]string{}
)

// listDirs returns the directories of the packages go list resolves the
// patterns to.
func listDirs(root string, pkgs []string) ([]string, error) {
	key := strings.Join(pkgs, " ")
	listMu.Lock()
	defer listMu.Unlock()
	if d, ok := listCache[key]; ok {
		return d, nil
	}
	cmd := exec.Command("go", append([]string{"list", "-f", "{{.Dir}}"}, pkgs...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	dirs := strings.Fields(string(out))
	if len(dirs) == 0 {
		return nil, fmt.Errorf("go list names no package")
	}
	listCache[key] = dirs
	return dirs, nil
}

var testFuncRE = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Example|Fuzz)\w*)\(`)

// testFuncs returns the names of the Test, Benchmark, Example and Fuzz
// functions of the _test.go files in dirs.
func testFuncs(t *testing.T, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range testFuncRE.FindAllSubmatch(b, -1) {
				out = append(out, string(m[1]))
			}
		}
	}
	return out
}

// matchesAny reports whether a -run, -bench or -fuzz pattern selects one of
// the functions: as go test does, the pattern's first slash-separated
// element is matched against the top-level names (of benchmarks only, for
// -bench; of fuzz targets, for -fuzz).
func matchesAny(pat string, names []string, flag string) (bool, error) {
	top := pat
	if i := strings.IndexByte(pat, '/'); i >= 0 {
		top = pat[:i]
	}
	re, err := regexp.Compile(top)
	if err != nil {
		return false, err
	}
	prefix := map[string]string{"-bench": "Benchmark", "-fuzz": "Fuzz"}[flag]
	for _, n := range names {
		if prefix != "" && !strings.HasPrefix(n, prefix) {
			continue
		}
		if prefix == "" && strings.HasPrefix(n, "Benchmark") {
			continue
		}
		if re.MatchString(n) {
			return true, nil
		}
	}
	return false, nil
}

// TestReadmeLength keeps README.md a page for users: under 320 lines.
func TestReadmeLength(t *testing.T) {
	n := lineCount(t, filepath.Join(moduleRoot(t), "README.md"))
	if n >= 320 {
		t.Errorf("README.md has %d lines; it must stay under 320 (move detail to docs/)", n)
	}
	t.Logf("README.md: %d lines", n)
}

func lineCount(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// machinePaths are paths of the machine the docs were written on, or of
// its workplace, that a reader does not have: never in README.md or
// docs/, in prose or in code. /tmp/ is a path every Unix machine has, but a
// command a reader copies should not depend on it either, so it may appear
// only in output blocks (text, output, and the output lines of console
// blocks), where it shows what a run printed.
var machinePaths = []string{"../shared", "/work/"}

// TestDocPaths fails when README.md or docs/ name a path of this machine
// (machinePaths) or /tmp/ outside output, or point a reader at a Go source
// file ("see persist.go") in prose: a user reads what the code does, not
// where; go doc and the architecture page's source map (which names
// packages) say where. The notes (docs/notes/ and docs/performance-notes.md,
// which the code's comments cite) are records of investigations at a
// commit, for readers of the code, and may name source files.
func TestDocPaths(t *testing.T) {
	root := moduleRoot(t)
	for _, f := range docFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.HasPrefix(f, "docs/notes/") || f == "docs/performance-notes.md"
		for _, p := range pathProblems(string(b), notes) {
			t.Errorf("%s:%d: %s", f, p.line, p.what)
		}
	}
}

type problem struct {
	line int
	what string
}

var goFileRE = regexp.MustCompile(`\b[\w/.-]*\w\.go\b`)

// pathProblems returns the lines of a markdown text that name a machine
// path, /tmp/ outside output, or, unless sourceOK, a .go file in prose.
func pathProblems(text string, sourceOK bool) []problem {
	var out []problem
	fence := "" // the language of the block the line is in, "" outside
	in := false
	for i, ln := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(ln, " \t")
		if strings.HasPrefix(trimmed, "```") {
			if in {
				in = false
			} else {
				in, fence = true, strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			}
			continue
		}
		for _, p := range machinePaths {
			if strings.Contains(ln, p) {
				out = append(out, problem{i + 1, fmt.Sprintf("names %q, a path of the machine the docs were written on", p)})
			}
		}
		output := in && (fence == "text" || fence == "output" || fence == "console" && !strings.HasPrefix(ln, "$ "))
		if strings.Contains(ln, "/tmp/") && !output {
			out = append(out, problem{i + 1, "names /tmp/ outside an output block"})
		}
		if !in && !sourceOK {
			for _, m := range goFileRE.FindAllString(strings.ReplaceAll(ln, "pkg.go.dev", ""), -1) {
				if !slices.Contains([]string{"go.mod", "go.sum"}, m) {
					out = append(out, problem{i + 1, fmt.Sprintf("points at the source file %s; say what, not where", m)})
				}
			}
		}
	}
	return out
}

// TestCheckers checks the checkers on small inputs: a shell line's words
// and commands, the patterns of go test, and the path rules.
func TestCheckers(t *testing.T) {
	got := commands("sh", "MNEMO_X=1 go test -run '^$' -bench \"A|B\" ./x/ # note\nmnemo query --db d \\\n  --k 3 > out.txt && echo done")
	want := []command{
		{1, []string{"go", "test", "-run", "^$", "-bench", "A|B", "./x/"}},
		{2, []string{"mnemo", "query", "--db", "d", "--k", "3"}},
		{2, []string{"echo", "done"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("commands = %v, want %v", got, want)
	}
	if got := commands("console", "$ mnemo stats --db d\nmnemo is output here"); len(got) != 1 || got[0].args[1] != "stats" {
		t.Errorf("console commands = %v", got)
	}
	names := []string{"TestA", "BenchmarkQuery", "ExampleX", "FuzzF"}
	for _, c := range []struct {
		flag, pat string
		want      bool
	}{
		{"-bench", "Query/annset", true},
		{"-bench", "TestA", false},
		{"-run", "Query", false},
		{"-run", "Example", true},
		{"-fuzz", "^FuzzF$", true},
	} {
		if ok, err := matchesAny(c.pat, names, c.flag); ok != c.want || err != nil {
			t.Errorf("matchesAny(%q, %s) = %v, %v; want %v", c.pat, c.flag, ok, err, c.want)
		}
	}
	text := "see persist.go and pkg.go.dev/x\n```text\n/tmp/x\n```\n```sh\nls /tmp/x\n```\n../shared/data"
	var lines []int
	for _, p := range pathProblems(text, false) {
		lines = append(lines, p.line)
	}
	if fmt.Sprint(lines) != "[1 6 8]" {
		t.Errorf("pathProblems flagged lines %v, want [1 6 8]", lines)
	}
	if got := pathProblems("see persist.go", true); len(got) != 0 {
		t.Errorf("pathProblems in notes = %v, want none", got)
	}
	if got := imports("db, err := engine.Open(\"postgres.x\", nil) // or postgres.Open", ""); fmt.Sprint(got) != "[github.com/mnemodb/mnemo/engine]" {
		t.Errorf("imports = %v, want only the engine", got)
	}
	if got := goSource("// f does.\nfunc f() {}"); !strings.Contains(got, "func main() {}") || strings.Contains(got, "func main() {\n") {
		t.Errorf("a declaration after a comment was not kept at top level:\n%s", got)
	}
	blocks, err := parseBlocks("x.md", "<!-- doctest: skip needs a server -->\n```go\nx\n```\n  ```json\n  {}\n  ```")
	if err != nil || len(blocks) != 2 || blocks[0].skip != "needs a server" || blocks[1].text != "{}" || blocks[1].lang != "json" {
		t.Errorf("parseBlocks = %+v, %v", blocks, err)
	}
}
