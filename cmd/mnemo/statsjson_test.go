package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/postgres"
)

// statsOut runs mnemo stats with args and returns its standard output.
func statsOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(t.Context(), append([]string{"stats"}, args...), &out, &errOut); code != 0 {
		t.Fatalf("mnemo stats %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// parseStatsJSON decodes stats --json strictly: an unknown field fails.
func parseStatsJSON(t *testing.T, out string) statsJSON {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var st statsJSON
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("stats --json: %v in %s", err, out)
	}
	return st
}

// seedStats fills two collections of s: "a" with 5 records of which 2
// are deleted, "b" (text disabled, L2) with one record.
func seedStats(t *testing.T, s mnemo.Store) {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateCollection(ctx, "a", mnemo.CollectionConfig{Dimension: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := a.Upsert(ctx, mnemo.Record{ID: strconv.Itoa(i), Vector: []float32{1, float32(i), 2}, Content: fmt.Sprintf("note number %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Delete(ctx, "1", "3"); err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateCollection(ctx, "b", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2, Text: mnemo.TextConfig{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Upsert(ctx, mnemo.Record{ID: "x", Vector: []float32{1, 2}}); err != nil {
		t.Fatal(err)
	}
}

// TestStatsJSON checks that stats --json parses, with the documented
// fields, and says what the text output says, on a database directory.
func TestStatsJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	s, err := engine.OpenStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	seedStats(t, s)
	db, _ := engine.DBOf(s)
	c, _ := db.Collection("a")
	if err := c.Checkpoint(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(t.Context(), mnemo.Record{ID: "9", Vector: []float32{0, 0, 1}, Content: "after the checkpoint"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	text := statsOut(t, "--db", dir)
	st := parseStatsJSON(t, statsOut(t, "--db", dir, "--json"))
	if st.Backend != "engine" || st.DatabaseID == "" || st.OpenSeconds == nil || *st.OpenSeconds <= 0 {
		t.Errorf("backend %q, database id %q, open seconds %v", st.Backend, st.DatabaseID, st.OpenSeconds)
	}
	if st.DiskBytes == nil || *st.DiskBytes <= 0 || !regexp.MustCompile(`(?m)^database `+st.DatabaseID+`, opened in \S+, `+strconv.FormatInt(*st.DiskBytes, 10)+` bytes on disk$`).MatchString(text) {
		t.Errorf("JSON says database %q, %v bytes on disk; text output:\n%s", st.DatabaseID, st.DiskBytes, text)
	}
	line := regexp.MustCompile(`(?m)^(\w+): (\d+) records, dimension (\d+), (\w+), (\w+) index \((\d+) bytes, (\d+) tombstones\), (\d+) log records, last checkpoint at seq (\d+), opened by (\S+)`)
	lines := line.FindAllStringSubmatch(text, -1)
	if len(lines) != 2 || len(st.Collections) != 2 {
		t.Fatalf("%d collections in the text, %d in JSON:\n%s", len(lines), len(st.Collections), text)
	}
	for i, m := range lines {
		c := st.Collections[i]
		if c.EngineCollectionJSON == nil {
			t.Fatalf("collection %q has no engine fields", c.Name)
		}
		got := []string{c.Name, strconv.Itoa(c.Records), strconv.Itoa(c.Dimension), c.Metric, c.Index,
			strconv.FormatInt(c.IndexBytes, 10), strconv.Itoa(c.IndexTombstones), strconv.Itoa(c.LogRecords),
			strconv.FormatUint(c.LastCheckpointSeq, 10), c.OpenedBy}
		if strings.Join(got, " ") != strings.Join(m[1:], " ") {
			t.Errorf("JSON says %q, text %q", got, m[1:])
		}
	}
	a, b := st.Collections[0], st.Collections[1]
	if a.Records != 4 || a.Text == nil || a.Text.Terms == 0 || a.LastCheckpoint == nil || a.OpenedBy != "checkpoint+replay" {
		t.Errorf("collection a: %+v, text %+v", a, a.Text)
	}
	if b.Records != 1 || b.Metric != "l2" || b.Text != nil {
		t.Errorf("collection b: %+v, text %+v", b, b.Text)
	}
}

// TestStatsJSONServer checks stats --json on a PostgreSQL server: the
// fields every backend has, and the same numbers as the text output.
func TestStatsJSONServer(t *testing.T) {
	dsn := serverDB(t)
	s, err := postgres.Open(t.Context(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	seedStats(t, s)
	s.Close()
	text := statsOut(t, "--db", dsn)
	st := parseStatsJSON(t, statsOut(t, "--db", dsn, "--json"))
	if st.Backend != "postgres" || st.DatabaseID != "" || st.OpenSeconds != nil || st.DiskBytes != nil || len(st.Collections) != 2 {
		t.Fatalf("stats --json: %+v", st)
	}
	var want strings.Builder
	for _, c := range st.Collections {
		if c.EngineCollectionJSON != nil {
			t.Errorf("collection %q has engine fields on a server", c.Name)
		}
		fmt.Fprintf(&want, "%s: %d records, dimension %d, %s, %s index\n", c.Name, c.Records, c.Dimension, c.Metric, c.Index)
	}
	if want.String() != text {
		t.Errorf("JSON renders as\n%s\ntext output is\n%s", want.String(), text)
	}
	if st.Collections[0].Records != 3 || st.Collections[1].Records != 1 {
		t.Errorf("records %d and %d, want 3 and 1", st.Collections[0].Records, st.Collections[1].Records)
	}
}
