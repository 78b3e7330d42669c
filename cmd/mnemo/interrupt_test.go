package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestImportInterrupted runs mnemo import in a process of its own (see
// mnemoCommand), reading standard input from a pipe the test keeps open,
// sends it a signal and checks that it stops: exit status 130, one
// "interrupted" line on standard error saying how many records were
// committed, that count agreeing with the last "committed N", and the
// database, opened again, holding exactly the first N records of the
// input. "waiting" signals it once it has committed two batches and waits
// for input in the middle of the third; "feeding" while a goroutine
// writes lines as fast as the import reads them, so that the signal may
// meet a commit.
// PostgreSQL runs when MNEMO_PG_DSN is set.
func TestImportInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to another process on windows")
	}
	if testing.Short() {
		t.Skip("runs mnemo in processes")
	}
	engineDB := func(t *testing.T) string { return filepath.Join(t.TempDir(), "db") }
	tests := []struct {
		name    string
		db      func(*testing.T) string
		sig     os.Signal
		feeding bool
	}{
		{"engine/SIGINT/waiting", engineDB, os.Interrupt, false},
		{"engine/SIGTERM/waiting", engineDB, syscall.SIGTERM, false},
		{"engine/SIGINT/feeding", engineDB, os.Interrupt, true},
		{"postgres/SIGINT/waiting", serverDB, os.Interrupt, false},
		{"postgres/SIGINT/feeding", serverDB, os.Interrupt, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.db(t)
			committed, inFlight := interruptImport(t, db, tt.sig, tt.feeding)
			if !tt.feeding && inFlight != 0 {
				t.Errorf("a batch was being committed while the import waited for input")
			}
			checkImported(t, db, committed, inFlight)
		})
	}
}

// importBatch is the --batch of the interrupted imports.
const importBatch = 10

// importLine is the i-th line (from 0) of the interrupted imports' input.
func importLine(i int) string {
	return fmt.Sprintf(`{"id":"r%05d","vector":[1,%d],"content":"record %d"}`+"\n", i, i+1, i)
}

// interruptedLine matches the line mnemo import prints when a signal
// stops it, and captures the records committed and, when a commit was
// under way, its records.
var interruptedLine = regexp.MustCompile(`^mnemo import: interrupted: (\d+) records committed; (?:nothing after them was written|the (\d+) after them were being committed and may or may not have been written)\n$`)

// interruptImport starts mnemo import into db with standard input from a
// pipe, feeds it two batches and half of a third, and when it has
// committed the two sends it sig: at once, or if feeding after feeding it
// lines as fast as it reads them until it has committed two more. It checks the exit status, 130,
// and the lines on standard output and error, and returns the records
// the import reported committed and those it was committing when sig
// came (0 when none).
func interruptImport(t *testing.T, db string, sig os.Signal, feeding bool) (committed, inFlight int) {
	t.Helper()
	cmd := mnemoCommand(t, "import", "--db", db, "--collection", "c", "--dim", "2", "--metric", "l2", "--batch", strconv.Itoa(importBatch))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	acks := make(chan int, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "committed "))
			if err != nil {
				n = -1 // not an acknowledgement
			}
			acks <- n
		}
		close(acks)
		exited <- cmd.Wait() // after the last read of stdout
	}()
	defer cmd.Process.Kill() // when the test fails before the import exits

	sent := 0
	for ; sent < 2*importBatch+importBatch/2; sent++ {
		io.WriteString(stdin, importLine(sent))
	}
	last := 0 // the last "committed N"
	ack := func() bool {
		n, ok := <-acks
		if ok && n != last+importBatch {
			t.Fatalf("stdout: \"committed %d\" after %d, want %d (stderr %q)", n, last, last+importBatch, stderr.String())
		}
		if ok {
			last = n
		}
		return ok
	}
	for last < 2*importBatch {
		if !ack() {
			t.Fatalf("mnemo import exited after committing %d (stderr %q)", last, stderr.String())
		}
	}
	stop := make(chan struct{})
	fed := make(chan struct{})
	if feeding {
		go func() {
			defer close(fed)
			for i := sent; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := io.WriteString(stdin, importLine(i)); err != nil {
					return // the import has exited
				}
			}
		}()
		for last < 4*importBatch { // signal mid-stream, commits behind and ahead
			if !ack() {
				t.Fatalf("mnemo import exited after committing %d (stderr %q)", last, stderr.String())
			}
		}
	} else {
		close(fed)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("mnemo import still runs 30 s after %v (stderr %q)", sig, stderr.String())
	}
	for ack() { // the commits that ended after the signal came
	}
	close(stop)
	<-fed
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("mnemo import after %v: %v, want exit status %d (stderr %q)", sig, err, exitInterrupted, stderr.String())
	}
	m := interruptedLine.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("stderr %q: want one line \"mnemo import: interrupted: N records committed; ...\"", stderr.String())
	}
	t.Logf("after %v: %s", sig, strings.TrimSpace(m[0]))
	committed, _ = strconv.Atoi(m[1])
	inFlight, _ = strconv.Atoi(m[2])
	if committed != last {
		t.Fatalf("%q after \"committed %d\" on stdout", m[0], last)
	}
	return committed, inFlight
}

// checkImported opens db and checks that its collection c holds the first
// committed records of the input, each as imported, and nothing else but
// perhaps the inFlight after them, which a server may have committed as
// the cancel reached it.
func checkImported(t *testing.T, db string, committed, inFlight int) {
	t.Helper()
	ctx := context.Background()
	s, err := openStore(ctx, db, false, false)
	if err != nil {
		t.Fatalf("open after the interrupted import: %v", err)
	}
	defer s.Close()
	c, err := s.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	page, _, err := c.Scan(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != committed && (inFlight == 0 || len(page) != committed+inFlight) {
		t.Fatalf("%d records after %d committed (%d being committed when the signal came)", len(page), committed, inFlight)
	}
	for i, r := range page {
		var want jsonRecord
		if err := decodeLine([]byte(importLine(i)), &want); err != nil {
			t.Fatal(err)
		}
		if r.ID != want.ID || r.Content != want.Content || !slices.Equal(r.Vector, want.Vector) {
			t.Fatalf("record %d: %s %q %v, want %s %q %v", i, r.ID, r.Content, r.Vector, want.ID, want.Content, want.Vector)
		}
	}
}

// TestInterruptedInProcess runs commands with a context that ends: a
// command that fails once it has ended exits 130 with one "interrupted"
// line, and query --queries stops while it waits for a line of input,
// saying how many queries it answered (the one before), all printed.
func TestInterruptedInProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	var in strings.Builder
	for i := range 5 {
		in.WriteString(importLine(i))
	}
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--dim", "2", "--file", writeTemp(t, in.String())}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("import: exit %d", code)
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	for _, args := range [][]string{
		{"stats", "--db", dir},
		{"export", "--db", dir, "--collection", "c"},
		{"query", "--db", dir, "--collection", "c", "--vector", "[1,2]"},
		{"import", "--db", dir, "--collection", "c", "--file", writeTemp(t, importLine(7))},
	} {
		var out, errOut bytes.Buffer
		code := run(ended, args, &out, &errOut)
		want := "mnemo " + args[0] + ": interrupted\n" // before import had a collection to count commits in
		if code != exitInterrupted || errOut.String() != want || out.Len() > 0 {
			t.Errorf("mnemo %s with its context ended: exit %d, stdout %q, stderr %q; want exit %d, stderr %q",
				strings.Join(args, " "), code, out.String(), errOut.String(), exitInterrupted, want)
		}
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdin := &stallingReader{text: `{"id":1,"vector":[1,2]}` + "\n", waiting: make(chan struct{}), release: make(chan struct{})}
	defer close(stdin.release)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- queryCmd(ctx, []string{"--db", dir, "--collection", "c", "--queries", "-"}, stdin, &out, io.Discard)
	}()
	<-stdin.waiting
	cancel()
	err := <-done
	ie, ok := errors.AsType[*interruptedError](err)
	if !ok {
		t.Fatalf("query --queries - interrupted while it waits for input: %v, want an interruptedError", err)
	}
	if answered := strings.Count(out.String(), "\n"); ie.done != "1 queries answered" || answered != 1 {
		t.Fatalf("%q, with %d answers printed; want 1 answered and printed", ie.done, answered)
	}
}

// A stallingReader returns text, then blocks as a pipe whose writer is
// silent: its next Read closes waiting and returns io.EOF only once
// release is closed.
type stallingReader struct {
	text             string
	waiting, release chan struct{}
	once             sync.Once
}

func (r *stallingReader) Read(p []byte) (int, error) {
	if r.text != "" {
		n := copy(p, r.text)
		r.text = r.text[n:]
		return n, nil
	}
	r.once.Do(func() { close(r.waiting) })
	<-r.release
	return 0, io.EOF
}
