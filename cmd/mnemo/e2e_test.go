package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemodb/mnemo/engine"
)

// TestEndToEnd drives mnemo in processes of its own (see mnemoCommand):
// an import killed with SIGKILL part way, verify, the import finished,
// export, re-import into a second database, export again, and a
// record-by-record comparison.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mnemo in processes")
	}
	tmp := t.TempDir()
	const n = 3000
	data := filepath.Join(tmp, "in.jsonl")
	var buf bytes.Buffer
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < n; i++ {
		v := make([]float32, 8)
		for j := range v {
			v[j] = r.Float32()*2 - 1
		}
		js, _ := json.Marshal(jsonRecord{ID: fmt.Sprintf("r%05d", i), Vector: v, Content: fmt.Sprint("record ", i),
			Metadata: map[string]any{"i": float64(i), "even": i%2 == 0}})
		buf.Write(append(js, '\n'))
	}
	os.WriteFile(data, buf.Bytes(), 0o644)
	dbDir := filepath.Join(tmp, "db")

	// Import with fsync'd batches of 50 and kill it after some commits.
	cmd := mnemoCommand(t, "import", "--db", dbDir, "--collection", "c", "--dim", "8", "--metric", "l2", "--file", data, "--batch", "50")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	committed := 0
	for sc.Scan() {
		if c, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			committed, _ = strconv.Atoi(c)
			if committed >= 500 {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() { // commits reported before the kill landed
		if c, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			committed, _ = strconv.Atoi(c)
		}
	}
	cmd.Wait()
	if committed < 500 {
		t.Fatalf("only %d committed before the kill", committed)
	}
	if out, err := mnemoCommand(t, "verify", "--db", dbDir).CombinedOutput(); err != nil {
		t.Fatalf("verify after the kill: %v\n%s", err, out)
	}
	// Every acknowledged record is there, exactly.
	db, err := engine.Open(dbDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := db.Collection("c")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for i := 0; i < committed; i++ {
		var want jsonRecord
		json.Unmarshal([]byte(lines[i]), &want)
		got, ok, err := c.Get(context.Background(), want.ID)
		if !ok || err != nil || !slices.Equal(got.Vector, want.Vector) || got.Content != want.Content {
			t.Fatalf("acknowledged record %s: %+v, %v, %v", want.ID, got, ok, err)
		}
	}
	if c.Count()%50 != 0 {
		t.Fatalf("%d records: a batch is partly visible", c.Count())
	}
	db.Close()

	run := func(args ...string) []byte {
		t.Helper()
		out, err := mnemoCommand(t, args...).Output()
		if err != nil {
			t.Fatalf("mnemo %v: %v", args, err)
		}
		return out
	}
	run("import", "--db", dbDir, "--collection", "c", "--file", data) // finish (upserts are idempotent)
	exported := filepath.Join(tmp, "out.jsonl")
	run("export", "--db", dbDir, "--collection", "c", "--out", exported)
	db2 := filepath.Join(tmp, "db2")
	run("import", "--db", db2, "--collection", "c", "--dim", "8", "--metric", "l2", "--file", exported)
	again := run("export", "--db", db2, "--collection", "c")
	first, _ := os.ReadFile(exported)
	if !bytes.Equal(first, again) || bytes.Count(first, []byte("\n")) != n {
		t.Fatalf("re-import changed the records (%d and %d lines)", bytes.Count(first, []byte("\n")), bytes.Count(again, []byte("\n")))
	}
	q := run("query", "--db", db2, "--collection", "c", "--vector", "[0,0,0,0,0,0,0,0]", "--k", "3", "--filter", `{"even": true}`)
	if strings.Count(string(q), "\n") != 3 {
		t.Fatalf("query printed:\n%s", q)
	}
	if out := run("stats", "--db", db2); !strings.Contains(string(out), fmt.Sprintf("c: %d records", n)) {
		t.Fatalf("stats printed:\n%s", out)
	}
	if out := run("get", "--db", db2, "--collection", "c", "r00007"); !strings.Contains(string(out), `"content":"record 7"`) {
		t.Fatalf("get printed:\n%s", out)
	}
}

func TestImportBadLines(t *testing.T) {
	tmp := t.TempDir()
	in := strings.Join([]string{
		`{"id":"a","vector":[1,0],"content":"ok"}`,
		`{"id":"b","vector":[1,0,0]}`,
		`not json`,
		`{"id":"c","vector":[0,1]}`,
	}, "\n")
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"import", "--db", filepath.Join(tmp, "db"), "--collection", "c", "--dim", "2", "--file", writeTemp(t, in)}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "line 2:") || strings.Contains(out.String(), "committed") {
		t.Fatalf("exit %d, out %q, err %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code = run(t.Context(), []string{"import", "--db", filepath.Join(tmp, "db"), "--collection", "c", "--file", writeTemp(t, in), "--skip-bad"}, &out, &errOut)
	if code != 0 || !strings.Contains(errOut.String(), "line 2: skipped") || !strings.Contains(errOut.String(), "line 3: skipped") ||
		!strings.Contains(out.String(), "committed 2") {
		t.Fatalf("--skip-bad: exit %d, out %q, err %q", code, out.String(), errOut.String())
	}
}

func writeTemp(t *testing.T, s string) string {
	p := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(p, []byte(s), 0o644)
	return p
}

// TestEndToEndText drives mnemo, in processes of its own, through the
// text path with standard input for both files: content-only lines
// imported with --embedder hashing (and --progress into a pipe), then a
// file of queries answered from "--queries -".
func TestEndToEndText(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mnemo in processes")
	}
	tmp := t.TempDir()
	var in strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&in, `{"id":"d%04d","content":"document %d on subject %d","metadata":{"subject":%d}}`+"\n", i, i, i%10, i%10)
	}
	dbDir := filepath.Join(tmp, "db")
	cmd := mnemoCommand(t, "import", "--db", dbDir, "--collection", "docs", "--embedder", "hashing", "--batch", "300", "--progress")
	cmd.Stdin = strings.NewReader(in.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("import: %v\n%s", err, stderr.String())
	}
	if got := stdout.String(); got != "committed 300\ncommitted 600\ncommitted 900\ncommitted 1000\n" {
		t.Errorf("import printed %q", got)
	}
	if !strings.Contains(stderr.String(), "importing: ") || !strings.Contains(stderr.String(), "imported 1000 records, skipped 0 bad lines in ") {
		t.Errorf("import progress and summary: %q", stderr.String())
	}
	cmd = mnemoCommand(t, "query", "--db", dbDir, "--collection", "docs", "--queries", "-", "--k", "3")
	cmd.Stdin = strings.NewReader(`{"id":"a","text":"document 17"}` + "\n" + `{"id":"b","text":"subject","filter":{"subject":4},"k":5}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("query --queries -: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("query printed:\n%s", out)
	}
	var a, b jsonAnswer
	if json.Unmarshal([]byte(lines[0]), &a) != nil || string(a.ID) != `"a"` || len(a.Hits) != 3 || a.Hits[0].ID != "d0017" {
		t.Errorf("first answer %s: want id \"a\", 3 hits, d0017 first", lines[0])
	}
	if json.Unmarshal([]byte(lines[1]), &b) != nil || string(b.ID) != `"b"` || len(b.Hits) != 5 {
		t.Fatalf("second answer %s: want id \"b\" and 5 hits", lines[1])
	}
	for _, h := range b.Hits {
		if h.Metadata["subject"] != float64(4) {
			t.Errorf("hit %s of subject %v passed the filter", h.ID, h.Metadata["subject"])
		}
	}
}
