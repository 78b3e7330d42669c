package main

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelp checks "mnemo help CMD", "mnemo CMD --help" and their errors:
// a command's help goes to standard output with exit status 0, and an
// unknown command or subcommand is named, with exit status 2.
func TestHelp(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string // a prefix of standard output
		stderr string // contained in standard error
	}{
		{[]string{"help"}, 0, "mnemo: an embedded vector database", ""},
		{[]string{"--help"}, 0, "mnemo: an embedded vector database", ""},
		{[]string{"help", "import"}, 0, "Usage: mnemo import --db DIR --collection NAME", ""},
		{[]string{"import", "--help"}, 0, "Usage: mnemo import --db DIR --collection NAME", ""},
		{[]string{"import", "-h"}, 0, "Usage: mnemo import --db DIR --collection NAME", ""},
		{[]string{"import", "--db", "x", "-help"}, 0, "Usage: mnemo import --db DIR --collection NAME", ""},
		{[]string{"help", "get"}, 0, "Usage: mnemo get --db DIR --collection NAME ID...", ""},
		{[]string{"help", "version"}, 0, "Usage: mnemo version\n", ""},
		{[]string{"help", "help"}, 0, "Usage: mnemo help [COMMAND]\n", ""},
		{[]string{"help", "bench"}, 0, "Usage: mnemo bench SUBCOMMAND", ""},
		{[]string{"bench", "--help"}, 0, "Usage: mnemo bench SUBCOMMAND", ""},
		{[]string{"help", "bench", "ann"}, 0, "Usage: mnemo bench ann (--base FILE", ""},
		{[]string{"bench", "ann", "-h"}, 0, "Usage: mnemo bench ann (--base FILE", ""},
		{[]string{"help", "unknown"}, 2, "", `mnemo help: unknown command "unknown"`},
		{[]string{"help", "import", "extra"}, 2, "", `mnemo help: want one command, got ["import" "extra"]`},
		{[]string{"help", "bench", "foo"}, 2, "", `mnemo bench: unknown bench subcommand "foo"`},
		{[]string{"bench", "foo"}, 2, "", `mnemo bench: unknown bench subcommand "foo"`},
		{[]string{"bench"}, 2, "", "mnemo bench: no subcommand\nUsage: mnemo bench SUBCOMMAND"},
		{[]string{"nope"}, 2, "", `mnemo: unknown command "nope"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(t.Context(), tt.args, &out, &errOut)
			if code != tt.code || !strings.HasPrefix(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout starting %q, stderr with %q",
					code, out.String(), errOut.String(), tt.code, tt.stdout, tt.stderr)
			}
			if tt.code == 0 && errOut.Len() > 0 {
				t.Errorf("help wrote to stderr: %q", errOut.String())
			}
		})
	}
	var a, b bytes.Buffer
	run(t.Context(), []string{"help", "query"}, &a, &a)
	run(t.Context(), []string{"query", "--help"}, &b, &b)
	if a.String() != b.String() || !strings.Contains(a.String(), "\nFlags:\n") {
		t.Errorf("help query and query --help differ or list no flags:\n%s\n---\n%s", a.String(), b.String())
	}
}

// singleDash finds a flag written -flag.
var singleDash = regexp.MustCompile(`(^|[\s\[(|'"])-[A-Za-z]`)

// TestUsageMatchesFlags checks every command's usage against its flags:
// the synopsis names each flag, in the --flag style, with the placeholder
// its help uses; a flag is marked required exactly when the synopsis does
// not make it optional (brackets) or an alternative (parentheses); the
// list of "mnemo help" holds the same synopsis; and nothing says -flag,
// neither the usage nor the error for an unknown flag.
func TestUsageMatchesFlags(t *testing.T) {
	var general bytes.Buffer
	run(t.Context(), []string{"help"}, &general, &general)
	if m := singleDash.FindString(general.String()); m != "" {
		t.Errorf("mnemo help says %q:\n%s", m, general.String())
	}
	for _, u := range usages {
		if u.name == "help" {
			continue
		}
		t.Run(u.name, func(t *testing.T) {
			args := strings.Fields(u.name)
			if _, ok := commands[args[0]]; !ok {
				t.Fatalf("usage of %q, which is no command", u.name)
			}
			var out, errOut bytes.Buffer
			if code := run(t.Context(), append([]string{"help"}, args...), &out, &errOut); code != 0 {
				t.Fatalf("help: exit %d: %s", code, errOut.String())
			}
			helpText := out.String()
			if m := singleDash.FindString(helpText); m != "" {
				t.Errorf("help says %q:\n%s", m, helpText)
			}
			if !strings.Contains(strings.Join(strings.Fields(general.String()), " "), "mnemo "+u.synopsis) {
				t.Errorf("mnemo help lacks the synopsis %q", u.synopsis)
			}
			listed := helpFlags(helpText)
			inSynopsis := synopsisFlags(u.synopsis)
			for name, f := range listed {
				s, ok := inSynopsis[name]
				switch {
				case !ok:
					t.Errorf("--%s is not in the synopsis %q", name, u.synopsis)
				case s.meta != f.meta:
					t.Errorf("--%s: the synopsis says %q, the flag help %q", name, s.meta, f.meta)
				case f.required != (s.depth == 0):
					t.Errorf("--%s: marked required %v, but the synopsis has it at bracket depth %d", name, f.required, s.depth)
				}
			}
			for name := range inSynopsis {
				if _, ok := listed[name]; !ok {
					t.Errorf("the synopsis names --%s, which is no flag", name)
				}
			}
			out.Reset()
			errOut.Reset()
			if code := run(t.Context(), append(args, "--nope"), &out, &errOut); code != 2 ||
				!strings.HasPrefix(errOut.String(), "mnemo "+u.name+": unknown flag --nope\nUsage: mnemo "+u.name) {
				t.Errorf("--nope: exit %d, stderr %q", code, errOut.String())
			}
		})
	}
	for name := range commands {
		if name == "bench" {
			name = "bench ann"
		}
		if !slices.ContainsFunc(usages, func(u usage) bool { return u.name == name }) {
			t.Errorf("command %s has no usage", name)
		}
	}
}

type listedFlag struct {
	meta     string
	required bool
}

// helpFlags parses the "Flags:" section of a command's help.
func helpFlags(help string) map[string]listedFlag {
	flags := map[string]listedFlag{}
	_, section, _ := strings.Cut(help, "\nFlags:\n")
	name := ""
	for _, line := range strings.Split(section, "\n") {
		if rest, ok := strings.CutPrefix(line, "  --"); ok {
			n, meta, _ := strings.Cut(rest, " ")
			name = n
			flags[name] = listedFlag{meta: meta}
			continue
		}
		if name != "" && strings.Contains(line, "(required)") {
			f := flags[name]
			f.required = true
			flags[name] = f
		}
	}
	return flags
}

type synopsisFlag struct {
	meta  string
	depth int // brackets and parentheses around it
}

// synopsisFlags finds the flags of a synopsis, their placeholders and how
// deep in brackets or parentheses each sits.
func synopsisFlags(s string) map[string]synopsisFlag {
	flags := map[string]synopsisFlag{}
	toks := strings.Fields(s)
	depth := 0
	for i, tok := range toks {
		body := strings.TrimLeft(tok, "[(")
		depth += len(tok) - len(body)
		trimmed := strings.TrimRight(body, "])")
		if name, ok := strings.CutPrefix(trimmed, "--"); ok {
			f := synopsisFlag{depth: depth}
			if body == trimmed && i+1 < len(toks) {
				next := strings.TrimRight(toks[i+1], "])")
				if next == strings.ToUpper(next) && !strings.ContainsAny(next[:1], "[(|-") {
					f.meta = next
				}
			}
			flags[name] = f
		}
		depth -= len(body) - len(trimmed)
	}
	return flags
}

// TestFlagErrors checks that the flag package's parse errors are worded in
// the --flag style.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"import", "--nope"}, "mnemo import: unknown flag --nope\n"},
		{[]string{"import", "-nope"}, "mnemo import: unknown flag --nope\n"},
		{[]string{"import", "--db"}, "mnemo import: flag --db needs a value\n"},
		{[]string{"import", "--batch", "ten"}, `mnemo import: invalid value "ten" for --batch: parse error` + "\n"},
		{[]string{"import", "--skip-bad=maybe"}, `mnemo import: invalid boolean value "maybe" for --skip-bad: parse error` + "\n"},
		{[]string{"query", "--k", `"a for -b`}, `mnemo query: invalid value "\"a for -b" for --k: parse error` + "\n"},
		{[]string{"stats", "---db", "x"}, "mnemo stats: bad flag syntax: ---db\n"},
		{[]string{"backup", "--db", "x"}, "mnemo backup: --to is required\n"},
		{[]string{"query", "--db", "x", "--collection", "c"}, "mnemo query: give --vector, --text or both, or --queries\n"},
		{[]string{"get", "--db", "x", "--collection", "c"}, "mnemo get: no IDs given\n"},
		{[]string{"bench", "ann", "--ef", "1,x", "--synthetic", "n=10"}, `mnemo bench ann: --ef "1,x": want positive integers` + "\n"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), tt.args, &out, &errOut)
		first, _, _ := strings.Cut(errOut.String(), "Usage:")
		if code != 2 || first != tt.want {
			t.Errorf("mnemo %q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}
