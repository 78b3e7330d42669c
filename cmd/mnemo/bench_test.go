package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchANN(t *testing.T) {
	dir := t.TempDir()
	js, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"bench", "ann", "--synthetic", "n=1500,dim=16,clusters=8,seed=3,queries=40", "--ef", "10,50",
		"--backends", "hnsw,flat", "--threads", "1", "--json", js, "--svg", svg}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "recall") {
		t.Fatalf("no table:\n%s", out.String())
	}
	var rows []map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &rows); err != nil || len(rows) != 3 {
		t.Fatalf("JSON: %v, %d rows", err, len(rows))
	}
	for _, f := range []string{"backend", "ef", "k", "recall", "qps", "p50_us", "p99_us", "build_s", "build_vps", "bytes_per_vector", "n", "dim", "metric"} {
		if _, ok := rows[0][f]; !ok {
			t.Errorf("JSON rows lack %q", f)
		}
	}
	s, _ := os.ReadFile(svg)
	if err := xml.Unmarshal(s, new(struct{})); err != nil || !bytes.Contains(s, []byte("queries per second")) || !bytes.Contains(s, []byte(">hnsw<")) {
		t.Fatalf("SVG: %v", err)
	}
	// The quantized backend runs and answers as well.
	out.Reset()
	code = run(t.Context(), []string{"bench", "ann", "--synthetic", "n=800,dim=16,clusters=8,seed=3,queries=20", "--ef", "200",
		"--backends", "hnsw", "--quantize", "sq8", "--threads", "1"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "1.0000") {
		t.Fatalf("--quantize sq8: exit %d, want recall 1 at ef 200:\n%s%s", code, out.String(), errOut.String())
	}
	// hnswlib's points from a results file join the chart.
	results := filepath.Join(dir, "results.jsonl")
	os.WriteFile(results, []byte(`{"system":"hnswlib","ef":10,"recall":0.93,"qps":50000}`+"\n"), 0o644)
	code = run(t.Context(), []string{"bench", "ann", "--synthetic", "n=500,dim=16,clusters=8,seed=3,queries=20", "--ef", "10",
		"--backends", "hnsw", "--threads", "1", "--svg", svg, "--hnswlib", results}, &out, &errOut)
	if s, _ = os.ReadFile(svg); code != 0 || !bytes.Contains(s, []byte(">hnswlib<")) {
		t.Fatalf("--hnswlib: exit %d, %s; the chart has no hnswlib series", code, errOut.String())
	}
	for _, bad := range [][]string{{"bench"}, {"bench", "ann"}, {"bench", "ann", "--synthetic", "n=x"}, {"bench", "ann", "--synthetic", "n=10", "--ef", "0"}, {"bench", "ann", "--synthetic", "n=10", "--quantize", "pq"}} {
		if code := run(t.Context(), bad, &out, &errOut); code != 2 {
			t.Errorf("mnemo %v: exit %d, want 2", bad, code)
		}
	}
}

// TestBenchANNWriteErrors checks that a chart or JSON file that cannot be
// written fails the command: on a full device, or in a missing directory.
func TestBenchANNWriteErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing", "r")
	tests := [][]string{{"--svg", missing + ".svg"}, {"--json", missing + ".json"}}
	if _, err := os.Stat("/dev/full"); err == nil {
		tests = append(tests, []string{"--svg", "/dev/full"}, []string{"--json", "/dev/full"})
	}
	for _, extra := range tests {
		args := append([]string{"bench", "ann", "--synthetic", "n=300,dim=8,clusters=4,seed=3,queries=10", "--ef", "10",
			"--backends", "hnsw,flat", "--threads", "1"}, extra...)
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, &out, &errOut); code != 1 || !strings.HasPrefix(errOut.String(), "generating ") ||
			!strings.Contains(errOut.String(), "mnemo bench: "+extra[0]+": ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and the error", extra, code, errOut.String())
		}
	}
}
