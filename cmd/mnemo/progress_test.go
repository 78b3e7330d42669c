package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock is a settable clock for a progress.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func testProgress(w *bytes.Buffer, size int64, redraw bool) (*progress, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	return &progress{w: w, verb: "importing", items: "records", size: size, redraw: redraw, now: c.now, start: c.t}, c
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p, _ := testProgress(&buf, 10e6, false)
	tests := []struct {
		name    string
		n, read int64
		elapsed time.Duration
		size    int64
		want    string
	}{
		{"no rate in the first instants", 1000, 1e6, 300 * time.Millisecond, 10e6, "importing: 1000 records, 1.0/10.0 MB (10%)"},
		{"rate and time left", 4000, 2e6, 2 * time.Second, 10e6, "importing: 4000 records, 2.0/10.0 MB (20%), 2000 records/s, 8s left"},
		{"minutes left", 500, 1e6, 10 * time.Second, 10e6, "importing: 500 records, 1.0/10.0 MB (10%), 50 records/s, 1m30s left"},
		{"slow", 5, 2e3, 2 * time.Second, 1e5, "importing: 5 records, 2.0/100.0 kB (2%), 2.5 records/s, 1m38s left"},
		{"all read", 9000, 10e6, 3 * time.Second, 10e6, "importing: 9000 records, 10.0 MB (100%), 3000 records/s"},
		{"size unknown: no share, no time left", 4000, 2e6, 2 * time.Second, 0, "importing: 4000 records, 2.0 MB, 2000 records/s"},
		{"size unknown, small", 3, 120, 2 * time.Second, 0, "importing: 3 records, 120 B, 1.5 records/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.size = tt.size
			if got := p.line(tt.n, tt.read, tt.elapsed); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestProgressRedraw checks the terminal mode: one line kept up to date in
// place, at most every redrawEvery, padded over a longer previous text,
// cleared for other output and drawn again at once after that.
func TestProgressRedraw(t *testing.T) {
	var buf bytes.Buffer
	p, clock := testProgress(&buf, 0, true)
	p.update(123456, 0)
	if got := buf.String(); got != "\rimporting: 123456 records" {
		t.Fatalf("first report %q", got)
	}
	buf.Reset()
	clock.advance(redrawEvery / 2)
	p.update(123457, 0)
	if buf.Len() != 0 {
		t.Fatalf("redrawn after %s: %q", redrawEvery/2, buf.String())
	}
	clock.advance(redrawEvery)
	p.update(7, 0)
	if got, want := buf.String(), "\rimporting: 7 records     "; got != want {
		t.Fatalf("redraw %q, want %q (padded over the longer line)", got, want)
	}
	buf.Reset()
	p.clear()
	if got, want := buf.String(), "\r"+strings.Repeat(" ", len("importing: 7 records"))+"\r"; got != want {
		t.Fatalf("clear wrote %q, want %q", got, want)
	}
	buf.Reset()
	p.clear()
	if buf.Len() != 0 {
		t.Fatalf("a second clear wrote %q", buf.String())
	}
	p.update(8, 0) // at once: the line is off the screen
	if got := buf.String(); got != "\rimporting: 8 records" {
		t.Fatalf("after clear %q", got)
	}
}

// TestProgressLines checks the mode for files and pipes: whole lines, at
// most one every lineEvery, and nothing to clear.
func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p, clock := testProgress(&buf, 1000, false)
	for i := 1; i <= 12; i++ {
		p.update(int64(i), int64(i*50))
		p.clear()
		clock.advance(time.Second)
	}
	want := "importing: 1 records, 0.1/1.0 kB (5%)\n" +
		"importing: 6 records, 0.3/1.0 kB (30%), 1.2 records/s, 12s left\n" +
		"importing: 11 records, 0.6/1.0 kB (55%), 1.1 records/s, 8s left\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if got := p.summary(12); got != " in 12s (1.0 records/s)" {
		t.Fatalf("summary %q", got)
	}
}

func TestProgressNil(t *testing.T) {
	var p *progress
	p.update(1, 1)
	p.clear()
	if s := p.summary(1); s != "" {
		t.Fatalf("nil summary %q", s)
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Fatal("a file or a buffer taken for a terminal")
	}
}

// TestImportProgress runs import with and without --progress: asked for,
// standard error reports the progress and the rate; not asked for (and
// standard error is no terminal here), it holds only the summary; either
// way standard output holds one "committed N" line per batch.
func TestImportProgress(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 250; i++ {
		fmt.Fprintf(&in, `{"id":"r%d","vector":[%d,1]}`+"\n", i, i)
	}
	file := writeTemp(t, in.String())
	tests := []struct {
		name   string
		args   []string
		stdin  string
		stderr []string // each on standard error
		exact  string   // all of standard error, if set
	}{
		{"file, --progress", []string{"--file", file, "--progress"}, "",
			[]string{"importing: 100 records, ", "B (", "%)\n", "imported 250 records, skipped 0 bad lines in ", " records/s)\n"}, ""},
		{"stdin, --progress", []string{"--progress"}, in.String(),
			[]string{"importing: 100 records, ", "imported 250 records, skipped 0 bad lines in ", " records/s)\n"}, ""},
		{"file, no terminal", []string{"--file", file}, "", nil, "imported 250 records, skipped 0 bad lines\n"},
		{"file, --progress=false", []string{"--file", file, "--progress=false"}, "", nil, "imported 250 records, skipped 0 bad lines\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "db")
			args := append([]string{"--db", db, "--collection", "c", "--dim", "2", "--metric", "l2", "--batch", "100"}, tt.args...)
			var out, errOut bytes.Buffer
			if err := importCmd(t.Context(), args, strings.NewReader(tt.stdin), &out, &errOut); err != nil {
				t.Fatalf("import: %v; stderr %q", err, errOut.String())
			}
			if out.String() != "committed 100\ncommitted 200\ncommitted 250\n" {
				t.Errorf("stdout %q", out.String())
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr %q lacks %q", errOut.String(), w)
				}
			}
			if tt.exact != "" && errOut.String() != tt.exact {
				t.Errorf("stderr %q, want %q", errOut.String(), tt.exact)
			}
			if tt.stdin != "" && strings.Contains(errOut.String(), "%") {
				t.Errorf("a share of standard input, whose size is unknown: %q", errOut.String())
			}
		})
	}
}

// TestCountProgressLine: a progress over a known number of items (a
// build) shows done/total, the share, the rate and the time left.
func TestCountProgressLine(t *testing.T) {
	p := newCountProgress(&bytes.Buffer{}, "building hnsw", "vectors", 10000)
	tests := []struct {
		name    string
		n       int64
		elapsed time.Duration
		want    string
	}{
		{"no rate in the first instants", 1000, 300 * time.Millisecond, "building hnsw: 1000/10000 vectors (10%)"},
		{"rate and time left", 4000, 2 * time.Second, "building hnsw: 4000/10000 vectors (40%), 2000 vectors/s, 3s left"},
		{"done", 10000, 5 * time.Second, "building hnsw: 10000/10000 vectors (100%), 2000 vectors/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.line(tt.n, 0, tt.elapsed); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestBenchProgress: bench ann --progress reports each build on stderr.
func TestBenchProgress(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"bench", "ann", "--synthetic", "n=2000,dim=8,queries=10", "--backends", "hnsw,flat", "--ef", "10", "--progress"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"building hnsw: ", "building flat: ", "/2000 vectors ("} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}
