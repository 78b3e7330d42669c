package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportStrictJSONL checks that import takes exactly one JSON value per
// line, refuses lines it would otherwise store altered (invalid UTF-8,
// lone surrogate escapes), and counts what --skip-bad skipped.
func TestImportStrictJSONL(t *testing.T) {
	rec := func(id string) string { return `{"id":"` + id + `","vector":[1,0]}` }
	long := `{"id":"long","vector":[1,0],"content":"` + strings.Repeat("x", 64<<20) + `"}`
	tests := []struct {
		name    string
		lines   []string
		skipBad bool
		code    int
		stderr  []string // each must appear on standard error
		ids     []string // what export finds afterwards
	}{
		{
			name:   "valid file with blank lines, CRLF and surrounding spaces",
			lines:  []string{rec("a"), "", "  \t", rec("b") + "  \r", "\t" + rec("c"), rec(`\ud83d\ude00`), rec(`d\\udcff`)},
			stderr: []string{"imported 5 records, skipped 0 bad lines"},
			ids:    []string{"a", "b", "c", `d\udcff`, "😀"},
		},
		{
			name:   "two objects on one line",
			lines:  []string{rec("a"), rec("b") + rec("c"), rec("d")},
			code:   1,
			stderr: []string{"line 2:", "after the JSON value"},
		},
		{
			name:    "two objects on one line, skip-bad",
			lines:   []string{rec("a"), rec("b") + " " + rec("c"), rec("d")},
			skipBad: true,
			stderr:  []string{"line 2: skipped", "skipped 1 bad lines"},
			ids:     []string{"a", "d"},
		},
		{
			name:   "trailing junk",
			lines:  []string{rec("a"), rec("b") + " x"},
			code:   1,
			stderr: []string{"line 2:", "after the JSON value"},
		},
		{
			name:    "trailing junk, skip-bad",
			lines:   []string{rec("a") + ",", rec("b") + "]", rec("c") + " // note", rec("d")},
			skipBad: true,
			stderr:  []string{"line 1: skipped", "line 2: skipped", "line 3: skipped", "skipped 3 bad lines"},
			ids:     []string{"d"},
		},
		{
			name:   "invalid UTF-8 id",
			lines:  []string{rec("key\xff"), rec("key\xfe")},
			code:   1,
			stderr: []string{"line 1:", "invalid UTF-8"},
		},
		{
			name:    "invalid UTF-8 ids are not merged, skip-bad",
			lines:   []string{rec("key\xff"), rec("key\xfe"), rec("key")},
			skipBad: true,
			stderr:  []string{"line 1: skipped", "line 2: skipped", "invalid UTF-8", "skipped 2 bad lines"},
			ids:     []string{"key"},
		},
		{
			name:    "invalid UTF-8 in content and outside the value, skip-bad",
			lines:   []string{`{"id":"a","vector":[1,0],"content":"caf` + "\xe9" + `"}`, rec("b") + " \xff", rec("c")},
			skipBad: true,
			stderr:  []string{"line 1: skipped", "line 2: skipped", "skipped 2 bad lines"},
			ids:     []string{"c"},
		},
		{
			name:    "lone surrogate escapes are not merged, skip-bad",
			lines:   []string{rec(`key\udcff`), rec(`key\udcfe`), rec(`key\ud800x`), rec("key")},
			skipBad: true,
			stderr:  []string{"line 1: skipped", "line 2: skipped", "line 3: skipped", "surrogate", "skipped 3 bad lines"},
			ids:     []string{"key"},
		},
		{
			name: "skip-bad counts every kind of bad line",
			lines: []string{rec("a"), `{"id":"b","vector":[1,0,0]}`, "not json", rec("c") + rec("d"),
				rec("e\xff"), `{"id":"f","vector":[1,0],"extra":1}`, "", rec("g")},
			skipBad: true,
			stderr:  []string{"line 2: skipped", "line 3: skipped", "line 4: skipped", "line 5: skipped", "line 6: skipped", "skipped 5 bad lines"},
			ids:     []string{"a", "g"},
		},
		{
			name:   "line longer than the limit",
			lines:  []string{rec("a"), long, rec("c")},
			code:   1,
			stderr: []string{"line 2:", "64 MiB"},
		},
		{
			name:    "line longer than the limit, skip-bad",
			lines:   []string{rec("a"), long, rec("c")},
			skipBad: true,
			stderr:  []string{"line 2: skipped", "64 MiB", "skipped 1 bad lines"},
			ids:     []string{"a", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			args := []string{"import", "--db", db, "--collection", "c", "--dim", "2", "--batch", "2", "--file", writeTemp(t, strings.Join(tt.lines, "\n"))}
			if tt.skipBad {
				args = append(args, "--skip-bad")
			}
			var out, errOut bytes.Buffer
			code := run(t.Context(), args, &out, &errOut)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, errOut.String())
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut.String())
				}
			}
			if got := exportIDs(t, db, "c"); !slices.Equal(got, tt.ids) {
				t.Errorf("stored ids %q, want %q", got, tt.ids)
			}
		})
	}
}

// TestImportContentIDs: an import of id-less lines run twice (as after an
// interruption) stores each record twice, but with --content-ids once.
func TestImportContentIDs(t *testing.T) {
	file := writeTemp(t, `{"vector":[1,0],"content":"first"}
{"vector":[0,1],"content":"second"}
{"id":"kept","vector":[1,1],"content":"first"}`)
	for _, tc := range []struct {
		flags []string
		want  int
	}{
		{nil, 5},                       // two random ids a run, and "kept"
		{[]string{"--content-ids"}, 3}, // the same two ids both runs
	} {
		db := filepath.Join(t.TempDir(), "db")
		for range 2 {
			args := append([]string{"import", "--db", db, "--collection", "c", "--dim", "2", "--file", file}, tc.flags...)
			var out, errOut bytes.Buffer
			if code := run(t.Context(), args, &out, &errOut); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
			}
		}
		if got := exportIDs(t, db, "c"); len(got) != tc.want {
			t.Errorf("%v twice: %d records %q, want %d", tc.flags, len(got), got, tc.want)
		}
	}
}
