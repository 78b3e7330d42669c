package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
)

// TestReduceFilter: a query's filter loses the conditions the field
// index knows hold for every record, and only those: as records gain,
// change and lose the fields a condition names, and after a restart,
// the answers are the filter's, whichever mode asks.
func TestReduceFilter(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "m", mnemo.CollectionConfig{Dimension: 2})
	var recs []mnemo.Record
	for i := range 300 {
		recs = append(recs, mnemo.Record{ID: fmt.Sprintf("r%03d", i), Vector: vec(1, float32(i)/300+0.1),
			Content: "note number " + fmt.Sprint(i), Metadata: map[string]any{"kind": "note"}})
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	notExpired, err := mnemo.ParseFilter(`{"$or": [{"exp": {"$exists": false}}, {"exp": {"$gt": 100}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	hasKind, err := mnemo.ParseFilter(`{"kind": {"$exists": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	reduced := func(c *Collection, f *mnemo.Filter) bool {
		c.mu.RLock()
		defer c.mu.RUnlock()
		return c.reduceFilter(f).IsEmpty()
	}
	// found reports whether a query in each mode, nearest to x's vector
	// and naming its words, returns x.
	found := func(t *testing.T, c *Collection, f *mnemo.Filter) []bool {
		t.Helper()
		var out []bool
		for _, mode := range []mnemo.Mode{mnemo.ModeVector, mnemo.ModeText, mnemo.ModeHybrid} {
			q := mnemo.Query{Vector: vec(1, 0), Text: "expired memory", Mode: mode, K: 5, Filter: f, Spread: mnemo.DefaultSpread()}
			if mode == mnemo.ModeVector {
				q.Spread = nil
			}
			hits, err := c.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, slices.ContainsFunc(hits, func(h mnemo.Hit) bool { return h.Record.ID == "x" }))
		}
		return out
	}
	none := []bool{false, false, false}
	all := []bool{true, true, true}

	if !reduced(c, notExpired) || !reduced(c, hasKind) {
		t.Fatal("no record has exp and every one has kind: both filters should reduce to none")
	}
	// x, nearest and the only text match, expired at 50.
	x := mnemo.Record{ID: "x", Vector: vec(1, 0), Content: "expired memory", Metadata: map[string]any{"kind": "note", "exp": 50.0}}
	if _, err := c.Upsert(ctx, x); err != nil {
		t.Fatal(err)
	}
	if reduced(c, notExpired) {
		t.Fatal("a record has exp: the expiry filter must stay")
	}
	if got := found(t, c, notExpired); !slices.Equal(got, none) {
		t.Fatalf("an expired record returned (vector, text, hybrid): %v", got)
	}
	if got := found(t, c, nil); !slices.Equal(got, all) {
		t.Fatalf("without the filter, x not returned (vector, text, hybrid): %v", got)
	}
	// x without kind: hasKind must now apply, and drop it.
	x.Metadata = map[string]any{"exp": 50.0}
	if _, err := c.Upsert(ctx, x); err != nil {
		t.Fatal(err)
	}
	if reduced(c, hasKind) {
		t.Fatal("a record lacks kind: the $exists filter must stay")
	}
	if got := found(t, c, hasKind); !slices.Equal(got, none) {
		t.Fatalf("a record without kind returned under kind $exists (vector, text, hybrid): %v", got)
	}
	// x rewritten without exp: nothing expires again.
	x.Metadata = map[string]any{"kind": "note"}
	if _, err := c.Upsert(ctx, x); err != nil {
		t.Fatal(err)
	}
	if !reduced(c, notExpired) || !reduced(c, hasKind) {
		t.Fatal("after x lost exp and regained kind, the filters should reduce to none")
	}
	if got := found(t, c, notExpired); !slices.Equal(got, all) {
		t.Fatalf("x not returned once it no longer expires (vector, text, hybrid): %v", got)
	}
	// Expired again, then deleted: the count goes back down.
	x.Metadata = map[string]any{"kind": "note", "exp": 50.0}
	if _, err := c.Upsert(ctx, x); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if !reduced(c, notExpired) {
		t.Fatal("after the only record with exp was deleted, the expiry filter should reduce to none")
	}
	// After a restart the index is rebuilt from the records.
	if _, err := c.Upsert(ctx, x); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, err = db.Collection("m")
	if err != nil {
		t.Fatal(err)
	}
	if reduced(c, notExpired) {
		t.Fatal("reopened: a record has exp, the expiry filter must stay")
	}
	if got := found(t, c, notExpired); !slices.Equal(got, none) {
		t.Fatalf("reopened: an expired record returned (vector, text, hybrid): %v", got)
	}
}
