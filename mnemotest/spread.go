package mnemotest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
)

// testSpread checks score spreading where sameHits would let a backend
// differ: hits are compared in order, IDs and all, ties included, and the
// reference must give the same answer every time. Neighbours the query
// had not found join in ID order; groups compare as filters do (1, "1"
// and true are three groups); positions that are not integers, and the
// candidate's own position, take nothing, also past 2^53; and a text
// query with MinSimilarity returns the best K hits that pass it.
func testSpread(t *testing.T, s mnemo.Store) {
	t.Run("Ties", func(t *testing.T) { spreadTies(t, s) })
	t.Run("HugePositions", func(t *testing.T) { spreadHugePositions(t, s) })
	t.Run("MixedGroups", func(t *testing.T) { spreadMixedGroups(t, s) })
	t.Run("MinSimilarity", func(t *testing.T) { spreadMinSimilarity(t, s) })
}

// sameOrder runs q on got and want and checks that both return the same
// IDs in the same order with the same scores, and that want returns the
// same IDs when asked again.
func sameOrder(t *testing.T, got, want mnemo.Collection, q mnemo.Query) {
	t.Helper()
	ctx := context.Background()
	w, err := want.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		again, err := want.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(again), ids(w)) {
			t.Fatalf("the engine answers the same query two ways:\n%v\n%v", ids(w), ids(again))
		}
	}
	g, err := got.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(g), ids(w)) {
		t.Fatalf("got %v\nthe engine %v", scored(g), scored(w))
	}
	sameHits(t, "spread", g, w)
}

// scored lists hits as "id:score".
func scored(hits []mnemo.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s:%.4g", h.Record.ID, h.Score)
	}
	return out
}

// spreadVector is a record vector that keeps distances apart.
func spreadVector(i int) []float32 { return []float32{1, float32(i%7) + 0.5} }

// spreadTies: one match, its neighbours' IDs in the reverse of their
// positions, stored last first, so that neither position nor storage
// order gives ID order.
func spreadTies(t *testing.T, s mnemo.Store) {
	names := []string{"z", "y", "x", "w", "v", "MATCH", "u", "t", "s", "r", "q"}
	recs := make([]mnemo.Record, len(names))
	for i, n := range names {
		content := "filler"
		if n == "MATCH" {
			content = "needle"
		}
		recs[i] = mnemo.Record{ID: n, Vector: spreadVector(i), Content: content, Metadata: map[string]any{"g": "a", "p": i}}
	}
	got, want := pairReversed(t, s, "spread-ties", mnemo.CollectionConfig{Dimension: 2}, recs)
	for _, k := range []int{1, 3, 4, 7} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			q := mnemo.Query{Text: "needle", K: k, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5, Window: 3}}
			sameOrder(t, got, want, q)
			q.Vector, q.Exact = []float32{1, 1}, true // hybrid
			sameOrder(t, got, want, q)
		})
	}
}

// spreadHugePositions: positions float64 cannot tell from their
// neighbours' (1e300) and positions past 2^53, under every window.
func spreadHugePositions(t *testing.T, s mnemo.Store) {
	positions := []float64{1e300, 1e300, 1 << 53, 1<<53 + 2, 1<<53 - 1, 1<<53 + 4, 5, 6}
	recs := make([]mnemo.Record, len(positions))
	for i, p := range positions {
		content := "hay stack"
		if i == 0 || i == 2 || i == 6 {
			content = "needle hay"
		}
		recs[i] = mnemo.Record{ID: fmt.Sprintf("r%d", i), Vector: spreadVector(i), Content: content, Metadata: map[string]any{"p": p}}
	}
	got, want := pair(t, s, "spread-huge", mnemo.CollectionConfig{Dimension: 2}, recs)
	for _, w := range []int{0, 1, 2, 3, 16} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			sameOrder(t, got, want, mnemo.Query{Text: "needle", K: 10, Spread: &mnemo.Spread{Position: "p", Weight: 1, Window: w}})
		})
	}
}

// spreadMixedGroups: groups of every JSON type, equal as numbers or as
// strings only, positions that are fractions or strings.
func spreadMixedGroups(t *testing.T, s mnemo.Store) {
	groups := []any{1, "1", 1.0, true, "true", nil, []any{1}, map[string]any{"a": 1}, 1, "1"}
	var recs []mnemo.Record
	for i, g := range groups {
		for p := range 3 {
			content := "hay"
			if p == 1 {
				content = "needle"
			}
			recs = append(recs, mnemo.Record{ID: fmt.Sprintf("g%d-p%d", i, p), Vector: spreadVector(i + p), Content: content, Metadata: map[string]any{"g": g, "p": p}})
		}
	}
	recs = append(recs,
		mnemo.Record{ID: "fraction", Vector: spreadVector(3), Content: "hay", Metadata: map[string]any{"g": 1, "p": 1.5}},
		mnemo.Record{ID: "string-position", Vector: spreadVector(4), Content: "hay", Metadata: map[string]any{"g": 1, "p": "2"}})
	got, want := pair(t, s, "spread-groups", mnemo.CollectionConfig{Dimension: 2}, recs)
	for _, w := range []int{0, 16} {
		for _, k := range []int{5, 40} {
			t.Run(fmt.Sprintf("window %d k %d", w, k), func(t *testing.T) {
				sameOrder(t, got, want, mnemo.Query{Text: "needle", K: k, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5, Window: w}})
			})
		}
	}
}

// spreadMinSimilarity: every other match is far from the query vector; a
// text query with Spread and MinSimilarity returns K hits that pass it.
func spreadMinSimilarity(t *testing.T, s mnemo.Store) {
	recs := make([]mnemo.Record, 12)
	for i := range recs {
		v := []float32{1, 0}
		if i%2 == 0 {
			v = []float32{-1, 0.01}
		}
		recs[i] = mnemo.Record{ID: fmt.Sprintf("r%02d", i), Vector: v, Content: "needle", Metadata: map[string]any{"p": i * 10}}
	}
	got, want := pair(t, s, "spread-min-similarity", mnemo.CollectionConfig{Dimension: 2}, recs)
	q := mnemo.Query{Text: "needle", Vector: []float32{1, 0}, Mode: mnemo.ModeText, K: 4, MinSimilarity: new(float32(0.5)),
		Spread: &mnemo.Spread{Position: "p", Weight: 0.5}}
	sameOrder(t, got, want, q)
	if g, _ := got.Query(context.Background(), q); len(g) != 4 {
		t.Fatalf("%d hits, want 4: %v", len(g), scored(g))
	}
}
