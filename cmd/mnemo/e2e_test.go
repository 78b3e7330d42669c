package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemodb/mnemo/engine"
)

// TestEndToEnd builds the binary and drives it: an import killed with
// SIGKILL part way, verify, the import finished, export, re-import into a
// second database, export again, and a record-by-record comparison.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "mnemo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
	cmd := exec.Command(bin, "import", "--db", dbDir, "--collection", "c", "--dim", "8", "--metric", "l2", "--file", data, "--batch", "50")
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
	if out, err := exec.Command(bin, "verify", "--db", dbDir).CombinedOutput(); err != nil {
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
		out, err := exec.Command(bin, args...).Output()
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
	code := run([]string{"import", "--db", filepath.Join(tmp, "db"), "--collection", "c", "--dim", "2", "--file", writeTemp(t, in)}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "line 2:") || strings.Contains(out.String(), "committed") {
		t.Fatalf("exit %d, out %q, err %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code = run([]string{"import", "--db", filepath.Join(tmp, "db"), "--collection", "c", "--file", writeTemp(t, in), "--skip-bad"}, &out, &errOut)
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
