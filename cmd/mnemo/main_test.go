package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{nil, 2, "Usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"help"}, 0, "mnemo demo"},
		{[]string{"demo", "--nope"}, 2, "mnemo demo: unknown flag --nope\nUsage: mnemo demo [--keep DIR]\n"},
		{[]string{"demo", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"demo", "--help"}, 0, "--keep DIR"},
		{[]string{"stats"}, 2, "mnemo stats: --db is required\n"},
		{[]string{"import", "--file", "x"}, 2, "mnemo import: --db and --collection are required\n"},
		{[]string{"backup", "--to", ""}, 2, "mnemo backup: --db and --to are required\n"},
		{[]string{"import", "--db", "x", "--collection", "c", "--batch", "0"}, 2, "mnemo import: --batch 0, want > 0\n"},
		{[]string{"import", "--db", "x", "--collection", "c", "--metric", "hamming"}, 2, `mnemo import: unknown metric "hamming"`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(tt.args, &out, &errOut)
		all := out.String() + errOut.String()
		if code != tt.code || !strings.Contains(all, tt.out) {
			t.Errorf("mnemo %v: exit %d, output %q; want exit %d and %q", tt.args, code, all, tt.code, tt.out)
		}
		if strings.Contains(all, "goroutine ") {
			t.Errorf("mnemo %v printed a stack trace", tt.args)
		}
	}
}

// TestDemo runs the demo into a kept directory and checks that each adapter
// recalled what it should and that the database reopens from checkpoints.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	var out, errOut bytes.Buffer
	if code := run([]string{"demo", "--keep", dir}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	s := out.String()
	for _, want := range []string{
		"get_weather map[city:Paris]",
		`Search("work")`, `["Paul works at Google"`,
		`"Use detailed responses."`, "/travel/lisbon.md",
		"user: My locker code is 4711.",
		"The user's favourite programming language is Go",
		"toolmem.tools", "opened by checkpoint+replay",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q:\n%s", want, s)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "db")); err != nil {
		t.Fatalf("--keep did not keep the database: %v", err)
	}
	// Again into the same directory: refused, nothing written.
	before, _ := os.ReadDir(dir)
	out.Reset()
	errOut.Reset()
	if code := run([]string{"demo", "--keep", dir}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "not empty") {
		t.Fatalf("demo --keep into a used directory: exit %d: %s", code, errOut.String())
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Fatalf("the refused demo changed %s: %d entries, %d before", dir, len(after), len(before))
	}
}

// TestPanicIsInternalError checks that a panic in a command is reported as
// an internal error with exit status 3, its stack trace only on request.
func TestPanicIsInternalError(t *testing.T) {
	tests := []struct {
		name  string
		panic func()
		debug bool
		want  string
	}{
		{"value", func() { panic("boom") }, false, "mnemo crash: internal error: boom\n"},
		{"runtime error", func() { s := []int{}; _ = s[len(os.Args)] }, false, "internal error: runtime error: index out of range"},
		{"error value", func() { panic(os.ErrClosed) }, false, "internal error: file already closed"},
		{"MNEMO_DEBUG=1 keeps the trace", func() { panic("boom") }, true, "goroutine "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			commands["crash"] = func([]string, io.Writer, io.Writer) error { tt.panic(); return nil }
			defer delete(commands, "crash")
			t.Setenv("MNEMO_DEBUG", "")
			if tt.debug {
				t.Setenv("MNEMO_DEBUG", "1")
			}
			var out, errOut bytes.Buffer
			code := run([]string{"crash"}, &out, &errOut)
			msg := errOut.String()
			if code != 3 || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "please report") {
				t.Errorf("exit %d, stderr %q; want exit 3, %q and a request to report it", code, msg, tt.want)
			}
			if !tt.debug && (strings.Contains(msg, "goroutine ") || strings.Count(msg, "\n") != 2) {
				t.Errorf("stderr %q: want two lines and no stack trace", msg)
			}
		})
	}
}
