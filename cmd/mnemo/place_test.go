package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// importLines imports lines into collection "c" of the database dir (made
// with --dim 2 if need be) and returns the exit status and stderr.
func importLines(t *testing.T, dir string, lines ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--dim", "2", "--file", writeTemp(t, strings.Join(lines, "\n"))}, &out, &errOut)
	return code, errOut.String()
}

// storedMeta returns the metadata of every record of collection "c" in
// dir, by id, as the engine holds it.
func storedMeta(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	db, err := engine.Open(dir, &engine.Options{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := c.Scan(context.Background(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]map[string]any{}
	for _, r := range recs {
		meta[r.ID] = r.Metadata
	}
	return meta
}

// TestImportPlace checks where import puts a line's group and position:
// in the record's metadata under mnemo.GroupField and mnemo.PositionField,
// group "" for a position alone, the collection's sequence (in line
// order; positions given leave it alone) for a group alone, nothing for
// a line with neither.
func TestImportPlace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	code, stderr := importLines(t, dir,
		`{"id":"a","vector":[1,0],"group":"s1","position":3}`,
		`{"id":"b","vector":[1,0],"group":"s1"}`,
		`{"id":"c","vector":[1,0],"position":-7,"metadata":{"k":"v"}}`,
		`{"id":"d","vector":[1,0],"metadata":{"k":"w"}}`,
		`{"id":"e","vector":[1,0],"group":"s2","metadata":{"mnemo.group":"s2"}}`,
		`{"id":"f","vector":[1,0],"group":"s1","position":1e3,"metadata":{"mnemo.pos":1000}}`,
		`{"id":"g","vector":[1,0],"group":null,"position":null}`,
		`{"id":"h","vector":[1,0],"metadata":{"mnemo.pos":1.5}}`,
	)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	// The sequence, never started, starts past the positions stored
	// (none yet) and hands out 0 and 1 in line order: the positions the
	// batch gives do not move it.
	want := map[string]map[string]any{
		"a": {mnemo.GroupField: "s1", mnemo.PositionField: 3.0},
		"b": {mnemo.GroupField: "s1", mnemo.PositionField: 0.0},
		"c": {mnemo.GroupField: "", mnemo.PositionField: -7.0, "k": "v"},
		"d": {"k": "w"},
		"e": {mnemo.GroupField: "s2", mnemo.PositionField: 1.0},
		"f": {mnemo.GroupField: "s1", mnemo.PositionField: 1000.0},
		"g": nil,
		"h": {mnemo.PositionField: 1.5},
	}
	if got := storedMeta(t, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("stored metadata\n%v\nwant\n%v", got, want)
	}
	// A later import goes on from the sequence, past the position the
	// first run of it reserved to find the sequence started.
	if code, stderr := importLines(t, dir, `{"id":"i","vector":[1,0],"group":"s1"}`, `{"id":"j","vector":[1,0],"group":"s1"}`); code != 0 {
		t.Fatalf("second import: exit %d: %s", code, stderr)
	}
	meta := storedMeta(t, dir)
	if i, j := meta["i"][mnemo.PositionField], meta["j"][mnemo.PositionField]; i != 3.0 || j != 4.0 {
		t.Errorf("second import: positions %v and %v, want 3 and 4", i, j)
	}
	// A position at the end of the range leaves the sequence room: later
	// lines without one still get theirs.
	if code, stderr := importLines(t, dir, `{"id":"k","vector":[1,0],"group":"s1","position":9007199254740991}`); code != 0 {
		t.Fatalf("import of 2^53-1: exit %d: %s", code, stderr)
	}
	if code, stderr := importLines(t, dir, `{"id":"l","vector":[1,0],"group":"s1"}`); code != 0 {
		t.Fatalf("an import after 2^53-1: exit %d: %s", code, stderr)
	}
}

// TestImportPlaceStartsSequence: a group without a position, in a
// collection whose sequence was never started, is placed after every
// position stored, as the adapters place a memory; and the adapters'
// next position comes after the ones import took.
func TestImportPlaceStartsSequence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "old", Vector: []float32{1, 0}, Metadata: map[string]any{mnemo.PositionField: 41}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, stderr := importLines(t, dir, `{"id":"new","vector":[1,0],"group":"s"}`); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if p := storedMeta(t, dir)["new"][mnemo.PositionField]; p != 42.0 {
		t.Errorf("position %v, want 42", p)
	}
	db, err = engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	if next, err := c.Reserve(ctx, 1); err != nil || next != 43 {
		t.Errorf("Reserve after the import: %d, %v; want 43", next, err)
	}
}

// TestImportPlaceBad checks the lines whose group or position import
// refuses: exit 1, naming the line and the problem.
func TestImportPlaceBad(t *testing.T) {
	tests := []struct{ name, line, msg string }{
		{"group a number", `{"id":"x","vector":[1,0],"group":3}`, "group 3: want a string"},
		{"group a list", `{"id":"x","vector":[1,0],"group":["a"]}`, `group ["a"]: want a string`},
		{"position a fraction", `{"id":"x","vector":[1,0],"position":1.5}`, "position 1.5: want an integer of magnitude below 2^53"},
		{"position a string", `{"id":"x","vector":[1,0],"position":"3"}`, `position "3": want an integer`},
		{"position 2^53", `{"id":"x","vector":[1,0],"position":9007199254740992}`, "position 9007199254740992: want an integer"},
		{"position -2^53", `{"id":"x","vector":[1,0],"position":-9007199254740992}`, "position -9007199254740992: want an integer"},
		{"position huge", `{"id":"x","vector":[1,0],"position":1e300}`, "position 1e300: want an integer"},
		{"position NaN", `{"id":"x","vector":[1,0],"position":NaN}`, "invalid character 'N'"},
		{"metadata's group differs", `{"id":"x","vector":[1,0],"group":"a","metadata":{"mnemo.group":"b"}}`, `metadata "mnemo.group" is "b", but the line's group is "a"`},
		{"metadata's group, no group", `{"id":"x","vector":[1,0],"position":2,"metadata":{"mnemo.group":"b"}}`, `metadata "mnemo.group" is "b", but the line's group is ""`},
		{"metadata's position differs", `{"id":"x","vector":[1,0],"position":2,"metadata":{"mnemo.pos":3}}`, `metadata "mnemo.pos" is 3, but the line's position is 2`},
		{"metadata's position a string", `{"id":"x","vector":[1,0],"position":2,"metadata":{"mnemo.pos":"2"}}`, `metadata "mnemo.pos" is "2", but the line's position is 2`},
		{"metadata's position, no position", `{"id":"x","vector":[1,0],"group":"a","metadata":{"mnemo.pos":3}}`, `metadata "mnemo.pos" is 3, but the line has a group and no position`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			code, stderr := importLines(t, dir, `{"id":"ok","vector":[1,0],"group":"a","position":1}`, tt.line)
			if want := "mnemo import: line 2: " + tt.msg; code != 1 || !strings.HasPrefix(stderr, want) {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q...", code, stderr, want)
			}
		})
	}
}

// TestExportPlaceRoundTrip: export writes a record's place as "group" and
// "position" (when import would take them so), and importing what it
// wrote gives the same records, places included.
func TestExportPlaceRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	code, stderr := importLines(t, dir,
		`{"id":"a","vector":[1,0],"group":"s1","position":3,"metadata":{"k":1}}`,
		`{"id":"b","vector":[0,1],"group":"s1"}`,
		`{"id":"c","vector":[1,1],"position":-7}`,
		`{"id":"d","vector":[1,0],"metadata":{"mnemo.pos":5}}`,
		`{"id":"e","vector":[1,0],"metadata":{"mnemo.group":"s","mnemo.pos":2.5}}`,
		`{"id":"f","vector":[1,0],"metadata":{"mnemo.group":7,"mnemo.pos":2}}`,
		`{"id":"g","vector":[1,0],"content":"plain"}`,
	)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	export := func(dir string) string {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"export", "--db", dir, "--collection", "c"}, &out, &errOut); code != 0 {
			t.Fatalf("export: exit %d: %s", code, errOut.String())
		}
		return out.String()
	}
	first := export(dir)
	// b takes the sequence's first position: the positions given leave
	// it alone.
	wantLines := map[string]string{
		"a": `{"id":"a","vector":[1,0],"metadata":{"k":1},"group":"s1","position":3}`,
		"b": `{"id":"b","vector":[0,1],"group":"s1","position":0}`,
		"c": `{"id":"c","vector":[1,1],"group":"","position":-7}`,
		"d": `{"id":"d","vector":[1,0],"metadata":{"mnemo.pos":5}}`,
		"e": `{"id":"e","vector":[1,0],"metadata":{"mnemo.group":"s","mnemo.pos":2.5}}`,
		"f": `{"id":"f","vector":[1,0],"metadata":{"mnemo.group":7,"mnemo.pos":2}}`,
		"g": `{"id":"g","vector":[1,0],"content":"plain"}`,
	}
	for _, l := range strings.Split(strings.TrimSuffix(first, "\n"), "\n") {
		var r struct{ ID string }
		json.Unmarshal([]byte(l), &r)
		if l != wantLines[r.ID] {
			t.Errorf("exported %s, want %s", l, wantLines[r.ID])
		}
	}
	again := filepath.Join(t.TempDir(), "db")
	if code, stderr := importLines(t, again, strings.Split(first, "\n")...); code != 0 {
		t.Fatalf("import of the export: exit %d: %s", code, stderr)
	}
	if second := export(again); second != first {
		t.Errorf("export, import, export gave\n%s\nafter\n%s", second, first)
	}
	if a, b := storedMeta(t, dir), storedMeta(t, again); !reflect.DeepEqual(a, b) {
		t.Errorf("the records imported from the export have metadata\n%v\nnot\n%v", b, a)
	}
}
