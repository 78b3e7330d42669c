package mnemotest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
)

// tieIDs are record IDs whose byte order differs from their order here
// (upper case before lower, multi-byte UTF-8 last, "id-10" before "id-2").
var tieIDs = []string{
	"b", "a", "B", "A", "id-2", "id-10", "id-01", "é", "日本", "~", "0", "9", "_", "Z", "a b", "aa", "ab", "z", "Ω", "zz",
}

// sortedTieIDs returns tieIDs in byte order: the order ties must come in.
func sortedTieIDs() []string {
	out := slices.Clone(tieIDs)
	slices.Sort(out)
	return out
}

// testTies checks the order of equal scores: a vector or text query (and
// each side of a hybrid one) orders them by record ID, ascending
// byte-wise, in every plan, and when more records tie than K returns the
// smallest IDs; equal fused scores keep the order of the sides (the
// vector side's first, see mnemo.SortHits). Both backends return the
// same records in the same order.
func testTies(t *testing.T, s mnemo.Store) {
	t.Run("Identical", func(t *testing.T) {
		for _, index := range []mnemo.IndexKind{mnemo.HNSW, mnemo.Flat} {
			t.Run(string(index), func(t *testing.T) { tiesIdentical(t, s, index) })
		}
	})
	t.Run("Mixed", func(t *testing.T) { tiesMixed(t, s) })
	t.Run("Crossed", func(t *testing.T) { tiesCrossed(t, s) })
}

// tieQuery is a query of testTies and the IDs it must return, in order.
type tieQuery struct {
	name string
	q    mnemo.Query
	want []string
}

// checkTies runs each query, as a subtest, on got and on the reference
// want, and checks both return exactly the expected IDs, with the
// reference's scores.
func checkTies(t *testing.T, got, want mnemo.Collection, queries []tieQuery) {
	t.Helper()
	ctx := context.Background()
	for _, tq := range queries {
		t.Run(tq.name, func(t *testing.T) {
			g, err := got.Query(ctx, tq.q)
			if err != nil {
				t.Fatal(err)
			}
			w, err := want.Query(ctx, tq.q)
			if err != nil {
				t.Fatalf("the engine: %v", err)
			}
			if !slices.Equal(ids(g), tq.want) {
				t.Fatalf("got %q, want %q (ties by ID)", ids(g), tq.want)
			}
			if !slices.Equal(ids(w), tq.want) {
				t.Fatalf("the engine returned %q, want %q (ties by ID)", ids(w), tq.want)
			}
			sameHits(t, tq.name, g, w)
			hybrid := tq.q.Mode == mnemo.ModeHybrid || tq.q.Mode == mnemo.ModeAuto && tq.q.Vector != nil && tq.q.Text != ""
			for i := 1; i < len(g) && !hybrid; i++ {
				if g[i].Score == g[i-1].Score && g[i].Record.ID <= g[i-1].Record.ID {
					t.Errorf("hits %d and %d score %v alike but are ordered %q, %q", i-1, i, g[i].Score, g[i-1].Record.ID, g[i].Record.ID)
				}
			}
		})
	}
}

// tiesIdentical: 20 records with the same vector and the same text.
func tiesIdentical(t *testing.T, s mnemo.Store, index mnemo.IndexKind) {
	cfg := mnemo.CollectionConfig{Dimension: 4, Index: index}
	sorted := sortedTieIDs()
	recs := make([]mnemo.Record, len(sorted))
	var even []string // the IDs the filter admits, in byte order
	for i, id := range sorted {
		recs[i] = mnemo.Record{ID: id, Vector: []float32{0.5, 0.25, 1, 2}, Content: "the tie breaker",
			Metadata: map[string]any{"even": i%2 == 0}}
		if i%2 == 0 {
			even = append(even, id)
		}
	}
	got, want := pairReversed(t, s, "ties-identical-"+string(index), cfg, recs)
	f, err := mnemo.ParseFilter(`{"even": true}`)
	if err != nil {
		t.Fatal(err)
	}
	vec := []float32{1, 0.5, 0.5, 1}
	n := len(sorted)
	var queries []tieQuery
	for _, k := range []int{1, 5, 19, 20, 25} {
		all := sorted[:min(k, n)]
		queries = append(queries,
			tieQuery{fmt.Sprintf("vector k=%d", k), mnemo.Query{Vector: vec, K: k}, all},
			tieQuery{fmt.Sprintf("vector exact k=%d", k), mnemo.Query{Vector: vec, K: k, Exact: true}, all},
			tieQuery{fmt.Sprintf("vector ef=40 k=%d", k), mnemo.Query{Vector: vec, K: k, Ef: 40}, all},
			tieQuery{fmt.Sprintf("text k=%d", k), mnemo.Query{Text: "tie breaker", K: k}, all},
			tieQuery{fmt.Sprintf("text with a vector k=%d", k), mnemo.Query{Text: "tie", Vector: vec, Mode: mnemo.ModeText, K: k}, all},
			// The sides retrieve DefaultFusionDepth (30) candidates: all.
			tieQuery{fmt.Sprintf("hybrid k=%d", k), mnemo.Query{Vector: vec, Text: "breaker", K: k}, all},
			tieQuery{fmt.Sprintf("hybrid rrf k=%d", k), mnemo.Query{Vector: vec, Text: "breaker", K: k, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF}}, all},
			tieQuery{fmt.Sprintf("hybrid depth 5 k=%d", k), mnemo.Query{Vector: vec, Text: "breaker", K: k, Fusion: mnemo.Fusion{Depth: 5}}, all[:min(k, 5)]},
		)
	}
	for _, k := range []int{3, 10} {
		queries = append(queries,
			tieQuery{fmt.Sprintf("filtered vector k=%d", k), mnemo.Query{Vector: vec, K: k, Filter: f}, even[:k]},
			tieQuery{fmt.Sprintf("filtered text k=%d", k), mnemo.Query{Text: "tie", K: k, Filter: f}, even[:k]},
			tieQuery{fmt.Sprintf("filtered hybrid k=%d", k), mnemo.Query{Vector: vec, Text: "tie", K: k, Filter: f}, even[:k]},
		)
	}
	checkTies(t, got, want, queries)
}

// tiesMixed: four groups of five identical records, interleaved in ID
// order, so that K cuts each tie group somewhere inside it.
func tiesMixed(t *testing.T, s mnemo.Store) {
	sorted := sortedTieIDs()
	vectors := [][]float32{{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 1}}
	texts := []string{"alpha", "alpha beta", "beta gamma", "gamma delta"}
	groups := make([][]string, len(vectors)) // each group's IDs in byte order
	recs := make([]mnemo.Record, len(sorted))
	for i, id := range sorted {
		g := i % len(vectors)
		recs[i] = mnemo.Record{ID: id, Vector: vectors[g], Content: texts[g]}
		groups[g] = append(groups[g], id)
	}
	got, want := pairReversed(t, s, "ties-mixed", mnemo.CollectionConfig{Dimension: 4}, recs)
	vec := []float32{1, 0.25, 0, 0} // group 0, then 1, 2, 3
	byVector := slices.Concat(groups[0], groups[1], groups[2], groups[3])
	byText := slices.Concat(groups[0], groups[1]) // "alpha": the shorter texts first
	var queries []tieQuery
	for _, k := range []int{3, 7, 12, 20} {
		queries = append(queries,
			tieQuery{fmt.Sprintf("vector k=%d", k), mnemo.Query{Vector: vec, K: k}, byVector[:k]},
			tieQuery{fmt.Sprintf("vector exact k=%d", k), mnemo.Query{Vector: vec, K: k, Exact: true}, byVector[:k]},
			tieQuery{fmt.Sprintf("text k=%d", k), mnemo.Query{Text: "alpha", K: k}, byText[:min(k, len(byText))]},
			tieQuery{fmt.Sprintf("hybrid k=%d", k), mnemo.Query{Vector: vec, Text: "alpha", K: k}, byVector[:k]},
			tieQuery{fmt.Sprintf("hybrid rrf k=%d", k), mnemo.Query{Vector: vec, Text: "alpha", K: k, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF}}, byVector[:k]},
		)
	}
	checkTies(t, got, want, queries)
}

// tiesCrossed: two records that tie in a hybrid query, each found first
// by a different side ("b" by the vector side, "a" by the text side
// only): the tie keeps the sides' order, the vector side's first, on
// every backend.
func tiesCrossed(t *testing.T, s mnemo.Store) {
	recs := []mnemo.Record{
		{ID: "b", Vector: []float32{1, 0}, Content: "banana"},
		{ID: "a", Vector: []float32{0, 1}, Content: "apple apple"},
	}
	got, want := pair(t, s, "ties-crossed", mnemo.CollectionConfig{Dimension: 2}, recs)
	half := mnemo.Fusion{VectorWeight: 0.5} // b: 0.5*1 + 0, a: 0.5*0 + 0.5*1
	q := mnemo.Query{Vector: []float32{1, 0}, Text: "apple", Fusion: half}
	k1, exact := q, q
	k1.K, exact.K, exact.Exact = 1, 2, true
	q.K = 2
	checkTies(t, got, want, []tieQuery{
		{"hybrid k=2", q, []string{"b", "a"}},
		{"hybrid k=1", k1, []string{"b"}},
		{"hybrid exact k=2", exact, []string{"b", "a"}},
	})
}
