package postgres_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// TestSpreadIndex: a new collection's table has the indexes over the
// reserved group and position, and the migration to schema version 3
// builds them over a table of an older schema; writes of any position (a
// string, an array, a number float8 underflows to zero, huge ones) and
// queries of their neighbours succeed with it.
func TestSpreadIndex(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	s, _ := openCollection(t, dsn, "c", mnemo.CollectionConfig{Dimension: 2})
	conn := connect(t, dsn)
	hasIndex := func() bool {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema()
			AND indexname IN ('mnemo_records_1_spread', 'mnemo_records_1_spread_pos')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 2
	}
	if !hasIndex() {
		t.Fatal("a new collection lacks its spread indexes")
	}
	s.Close()
	for _, stmt := range []string{`DROP INDEX mnemo_records_1_spread, mnemo_records_1_spread_pos`, `UPDATE mnemo_schema SET version = 2`} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !hasIndex() {
		t.Fatal("the migration from version 2 did not build the spread indexes")
	}
	c, err := s.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	positions := []any{"7", []any{1}, true, nil, json.Number("1e-400"), json.Number("-1e-320"), 1.5e308, -1e300, 0.5, 3, 4, 5}
	var recs []mnemo.Record
	for i, p := range positions {
		content := "hay"
		if i == 10 {
			content = "needle"
		}
		recs = append(recs, mnemo.Record{ID: string(rune('a' + i)), Vector: []float32{1, float32(i)}, Content: content,
			Metadata: map[string]any{"mnemo.group": "g", "mnemo.pos": p}})
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatalf("Upsert of odd positions with the spread index: %v", err)
	}
	// Around 4 (k): 3, -1e300 and, as a float64 zero, 1e-400 below;
	// 5 and 1.5e308 above; with the group or without.
	for _, group := range []string{"mnemo.group", ""} {
		hits, err := c.Query(ctx, mnemo.Query{Text: "needle", K: 10, Spread: &mnemo.Spread{Group: group, Position: "mnemo.pos", Weight: 0.5, Window: 3}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, h := range hits {
			got[h.Record.ID] = true
		}
		for _, id := range []string{"k", "j", "h", "e", "l", "g"} {
			if !got[id] {
				t.Errorf("group %q: %q missing from %v", group, id, got)
			}
		}
		if len(hits) != 6 {
			t.Errorf("group %q: %d hits, want 6: %v", group, len(hits), got)
		}
	}
}
