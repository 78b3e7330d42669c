package engine

import (
	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/internal/limitest"

	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The tests in this file guard the limits on what a write may hold:
// nesting and size (package mnemo's tests guard filters). Each risky call
// runs under limitest.Bounded.

// normalized is meta as Get returns it: through encoding/json, numbers as
// float64, and nil for none.
func normalized(t testing.TB, meta map[string]any) map[string]any {
	t.Helper()
	if len(meta) == 0 {
		return nil
	}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// limitsDB opens a database on fs holding collections "c" and "other",
// each with a record "keep", and "c" also "r".
func limitsDB(t *testing.T, fs vfs.FS) (*DB, *Collection) {
	t.Helper()
	db := mustOpen(t, "db", &Options{FS: fs})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	o := mustCollection(t, db, "other", mnemo.CollectionConfig{Dimension: 2})
	keep := mnemo.Record{ID: "keep", Vector: vec(1, 1), Metadata: map[string]any{"k": "v"}}
	if _, err := c.Upsert(ctx, keep, mnemo.Record{ID: "r", Vector: vec(0, 1), Metadata: map[string]any{"old": true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Upsert(ctx, keep); err != nil {
		t.Fatal(err)
	}
	return db, c
}

// checkGet fails unless c holds id with metadata want.
func checkGet(t *testing.T, c *Collection, id string, want map[string]any) {
	t.Helper()
	r, ok, err := c.Get(ctx, id)
	if err != nil || !ok {
		t.Fatalf("Get(%q) = %v, %v", id, ok, err)
	}
	if !reflect.DeepEqual(r.Metadata, want) {
		t.Fatalf("Get(%q) metadata %.200v, want %.200v", id, r.Metadata, want)
	}
}

// TestMetadataLimits upserts one record per case over an existing one: a
// rejected write must name the problem and change nothing, an accepted
// one must read back unchanged before and after a reopen, and the
// database must open either way.
func TestMetadataLimits(t *testing.T) {
	const deep = ": nested deeper than 64 levels"
	tests := []struct {
		name string
		meta map[string]any
		want string // a part of the error; "" when the write is accepted
	}{
		{"64 nested objects accepted", limitest.NestMaps(64), ""},
		{"64 nested lists accepted", limitest.NestLists(64), ""},
		{"65 nested objects rejected", limitest.NestMaps(65), "metadata" + strings.Repeat(".a", 64) + deep},
		{"65 nested lists rejected", limitest.NestLists(65), "metadata.l" + strings.Repeat("[0]", 63) + deep},
		{"10001 nested objects rejected", limitest.NestMaps(10001), "metadata" + strings.Repeat(".a", 64) + deep},
		{"path names keys and indexes", map[string]any{"a": map[string]any{"b": []any{0.0, 1.0, 2.0, map[string]any{"c": "\xff"}}}}, "metadata.a.b[3].c: string is not valid UTF-8"},
		{"odd keys quoted in the path", map[string]any{"a b": map[string]any{"": "\xff"}}, `metadata["a b"][""]: string is not valid UTF-8`},
		{"number out of float64 range", map[string]any{"n": json.Number("1e400")}, "metadata.n: "},
		{"number that is not JSON", map[string]any{"n": json.Number("0x10")}, "metadata.n: "},
		{"typed value out of float64 range", map[string]any{"raw": json.RawMessage(`{"x": 1e999}`)}, "metadata.raw: "},
		{"typed value nested too deep", map[string]any{"raw": json.RawMessage(strings.Repeat("[", 64) + strings.Repeat("]", 64))}, "metadata.raw" + strings.Repeat("[0]", 63) + deep},
		{"typed value at the depth limit", map[string]any{"raw": json.RawMessage(`{"b": [[{"c": [1]}]]}`), "n": json.Number("2.5"), "s": []string{"x"}}, ""},
		{"over the size limit", map[string]any{"s": strings.Repeat("x", mnemo.MaxMetadataBytes)}, "bytes of JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := vfs.NewMem()
			db, c := limitsDB(t, fs)
			defer func() { db.Close() }()
			var err error
			alloc := limitest.Bounded(tt.name, func() {
				_, err = c.Upsert(ctx, mnemo.Record{ID: "r", Vector: vec(1, 0), Metadata: tt.meta})
			})
			if tt.want == "" && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if tt.want != "" && (!errors.Is(err, mnemo.ErrInvalidRecord) || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %.300v, want ErrInvalidRecord mentioning %q", err, tt.want)
			}
			if alloc > limitest.SmallAlloc {
				t.Errorf("Upsert allocated %d MB", alloc>>20)
			}
			want := map[string]any{"old": true}
			if err == nil {
				want = normalized(t, tt.meta)
			}
			for round := 0; round < 2; round++ {
				if c.Count() != 2 {
					t.Fatalf("round %d: Count = %d, want 2", round, c.Count())
				}
				checkGet(t, c, "r", want)
				checkGet(t, c, "keep", map[string]any{"k": "v"})
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				db, err = Open("db", &Options{FS: fs})
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				for _, name := range []string{"c", "other"} {
					if c, err = db.Collection(name); err != nil {
						t.Fatalf("collection %q after reopen: %v", name, err)
					}
					checkGet(t, c, "keep", map[string]any{"k": "v"})
				}
				c, _ = db.Collection("c")
			}
		})
	}
}

// TestMetadataBounded feeds metadata whose walk has no natural end (cycles)
// or cost depth squared before the limits: each is rejected at once, with
// little memory, naming the limit it broke.
func TestMetadataBounded(t *testing.T) {
	selfMap := map[string]any{}
	selfMap["me"] = selfMap
	twice := map[string]any{}
	twice["a"], twice["b"] = twice, twice
	selfList := make([]any, 1)
	selfList[0] = selfList
	through := map[string]any{}
	through["l"] = []any{"x", through}
	wide := make([]any, 200_001)
	for i := range wide[:200_000] {
		wide[i] = 0.0
	}
	wideCycle := map[string]any{"l": wide}
	wide[200_000] = wideCycle
	tests := []struct {
		name string
		meta map[string]any
		want string
	}{
		{"map containing itself", selfMap, "metadata" + strings.Repeat(".me", 64) + ": nested deeper than 64 levels"},
		{"map containing itself twice", twice, ": nested deeper than 64 levels"},
		{"list containing itself", map[string]any{"l": selfList}, "metadata.l" + strings.Repeat("[0]", 63) + ": nested deeper than 64 levels"},
		{"cycle through a list", through, "metadata" + strings.Repeat(".l[1]", 32) + ": nested deeper than 64 levels"},
		{"wide cycle", wideCycle, "bytes of JSON"},
		{"240 KB of nested JSON", limitest.NestMaps(40_000), ": nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := mustOpen(t, "", &Options{InMemory: true})
			defer db.Close()
			c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
			var err error
			alloc := limitest.Bounded(tt.name, func() {
				_, err = c.Upsert(ctx, mnemo.Record{ID: "r", Vector: vec(1, 0), Metadata: tt.meta})
			})
			if !errors.Is(err, mnemo.ErrInvalidRecord) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %.300v, want ErrInvalidRecord mentioning %q", err, tt.want)
			}
			if alloc > limitest.SmallAlloc {
				t.Errorf("Upsert allocated %d MB", alloc>>20)
			}
			if c.Count() != 0 {
				t.Fatalf("a rejected record was stored")
			}
			if verr := c.Validate(mnemo.Record{Vector: vec(1, 0), Metadata: tt.meta}); !errors.Is(verr, mnemo.ErrInvalidRecord) {
				t.Fatalf("Validate = %v", verr)
			}
		})
	}
}

// TestBatchTooLarge: an Upsert of records each under the content limit
// but together over MaxBatchBytes is refused before anything is written
// (it once built a batch past Pebble's 4 GB limit and panicked).
func TestBatchTooLarge(t *testing.T) {
	skipUnderRace(t, "builds a batch over the size limit")
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "big", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat, Text: mnemo.TextConfig{Disabled: true}})
	content := strings.Repeat("x", mnemo.MaxContentLength-1) // one string, shared by every record
	n := mnemo.MaxBatchBytes/len(content) + 2
	recs := make([]mnemo.Record, n)
	for i := range recs {
		recs[i] = mnemo.Record{ID: fmt.Sprint(i), Vector: []float32{1, float32(i)}, Content: content}
	}
	_, err := c.Upsert(ctx, recs...)
	if !errors.Is(err, mnemo.ErrBatchTooLarge) {
		t.Fatalf("Upsert of %d records of %d bytes: %v, want ErrBatchTooLarge", n, len(content), err)
	}
	if c.Count() != 0 {
		t.Fatalf("a refused batch wrote %d records", c.Count())
	}
	if _, err := c.Upsert(ctx, recs[:2]...); err != nil {
		t.Fatalf("a batch under the limit: %v", err)
	}
}

// TestHugeK: K, Ef and the fusion depth near math.MaxInt answer every
// mode (a hybrid query's K once overflowed and panicked).
func TestHugeK(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "k", mnemo.CollectionConfig{Dimension: 2, M: 4})
	for i := range 30 {
		if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(i), Vector: []float32{1, float32(i)}, Content: fmt.Sprintf("note %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []mnemo.Query{
		{Vector: []float32{1, 0}, K: math.MaxInt},
		{Vector: []float32{1, 0}, K: math.MaxInt, Ef: math.MaxInt},
		{Text: "note", K: math.MaxInt},
		{Text: "note", Vector: []float32{1, 0}, K: math.MaxInt},
		{Text: "note", Vector: []float32{1, 0}, K: math.MaxInt/2 + 1, Fusion: mnemo.Fusion{Depth: math.MaxInt}},
		{Text: "note", Vector: []float32{1, 0}, K: math.MaxInt, Mode: mnemo.ModeText},
		{Text: "note", K: math.MaxInt, Spread: &mnemo.Spread{Position: "p", Weight: 0.5}},
	} {
		hits, err := c.Query(ctx, q)
		if err != nil || len(hits) != 30 {
			t.Errorf("%+v: %d hits, %v; want all 30", q, len(hits), err)
		}
	}
}
