package mnemotest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

// testSpread checks score spreading against spreadReference, a statement
// of mnemo.Spread's ordinal neighbours written here, not against the
// engine: hits are compared in order, IDs and all, ties included.
// Neighbours are the nearest admitted records of the group by rank, not
// by distance in position: groups that interleave, gaps in positions,
// equal positions whose IDs decide, a filter that excludes the nearest
// record, no group, positions past 2^53. Neighbours the query had not
// found join in ID order; groups compare as filters do (1, "1" and true
// are three groups); positions that are not integers take nothing; and a
// text query with MinSimilarity returns the best K hits that pass it.
func testSpread(t *testing.T, s mnemo.Store) {
	t.Run("Ties", func(t *testing.T) { spreadTies(t, s) })
	t.Run("HugePositions", func(t *testing.T) { spreadHugePositions(t, s) })
	t.Run("MixedGroups", func(t *testing.T) { spreadMixedGroups(t, s) })
	t.Run("MinSimilarity", func(t *testing.T) { spreadMinSimilarity(t, s) })
	t.Run("Interleaved", func(t *testing.T) { spreadInterleaved(t, s) })
	t.Run("Gaps", func(t *testing.T) { spreadGaps(t, s) })
	t.Run("EqualBelow", func(t *testing.T) { spreadEqualBelow(t, s) })
	t.Run("FilterSkips", func(t *testing.T) { spreadFilterSkips(t, s) })
	t.Run("Sparse", func(t *testing.T) { spreadSparse(t, s) })
}

// spreadCollection creates a collection of s holding recs, stored last
// first and one per batch when reversed (so that a backend that orders
// ties by storage instead of ID shows it).
func spreadCollection(t *testing.T, s mnemo.Store, name string, recs []mnemo.Record, reversed bool) mnemo.Collection {
	t.Helper()
	c := mustCreate(t, s, name, mnemo.CollectionConfig{Dimension: 2})
	if !reversed {
		mustUpsert(t, c, recs...)
		return c
	}
	for i := len(recs) - 1; i >= 0; i-- {
		mustUpsert(t, c, recs[i])
	}
	return c
}

// checkSpread runs q (with a Spread) on c, which holds recs, and checks
// its hits against spreadReference: the same IDs in the same order, with
// the same scores, every time it is asked. It returns the hits.
func checkSpread(t *testing.T, c mnemo.Collection, recs []mnemo.Record, q mnemo.Query) []mnemo.Hit {
	t.Helper()
	want := spreadReference(t, c, recs, q)
	got, err := c.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("got  %v\nwant %v", scored(got), scored(want))
	}
	for i := range got {
		if !near(got[i].Score, want[i].Score, 1e-9) {
			t.Fatalf("hit %d %q: score %v, want %v\ngot  %v\nwant %v", i, got[i].Record.ID, got[i].Score, want[i].Score, scored(got), scored(want))
		}
	}
	again, err := c.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(again), ids(got)) {
		t.Fatalf("the same query answered two ways:\n%v\n%v", ids(got), ids(again))
	}
	return got
}

// spreadReference answers q as mnemo.Spread says, from the candidates c
// gives for q without its Spread (the text side's SpreadDepth best, or
// every fused candidate of a hybrid query, with their scores) and the
// records recs that c holds. A candidate at position p of group g adds
// Weight times its score before spreading to each of its neighbours: of
// the records that the filter admits with a place in g, other than
// itself, the first Window below p by (position descending, ID) and the
// first Window above p by (position ascending, ID). Neighbours not among
// the candidates join after them in ID order; the hits under
// MinSimilarity are dropped, the rest ranked (mnemo.SortHits) and cut to
// K. Similarity is cosine (the spread tests' metric).
func spreadReference(t *testing.T, c mnemo.Collection, recs []mnemo.Record, q mnemo.Query) []mnemo.Hit {
	t.Helper()
	cq, mode, err := mnemo.CheckQuery(c.Name(), c.Config(), q)
	if err != nil {
		t.Fatal(err)
	}
	nb := cq.Spread
	base := cq
	base.Spread, base.MinSimilarity = nil, nil
	if mode == mnemo.ModeHybrid {
		base.Fusion.Depth = mnemo.FusionDepth(cq.Fusion, cq.K)
		base.K = 2 * base.Fusion.Depth // every fused candidate
	} else {
		base.K = max(cq.K, mnemo.SpreadDepth)
	}
	hits, err := c.Query(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	type placed struct {
		id    string
		group any
		pos   float64
		rec   mnemo.Record
	}
	var all []placed // admitted, with a place
	for _, r := range recs {
		meta := roundTrip(r.Metadata) // as stored: numbers as float64
		g, p, ok := nb.Place(meta)
		if ok && cq.Filter.Match(meta) {
			all = append(all, placed{r.ID, g, p, r})
		}
	}
	byID := make(map[string]placed, len(all))
	for _, r := range all {
		byID[r.id] = r
	}
	found := len(hits)
	at := make(map[string]int, len(hits))
	scores := make([]float64, len(hits))
	for i, h := range hits {
		at[h.Record.ID] = i
		scores[i] = h.Score
	}
	w := max(nb.Window, 1)
	for i := range found {
		me, ok := byID[hits[i].Record.ID]
		if !ok {
			if _, _, placedAtAll := nb.Place(roundTrip(hits[i].Record.Metadata)); placedAtAll {
				t.Fatalf("candidate %q has a place but the filter does not admit it", hits[i].Record.ID)
			}
			continue
		}
		var below, above []placed
		for _, r := range all {
			switch {
			case nb.Group != "" && r.group != me.group:
			case r.pos < me.pos:
				below = append(below, r)
			case r.pos > me.pos:
				above = append(above, r)
			}
		}
		slices.SortFunc(below, func(a, b placed) int { return cmp.Or(cmp.Compare(b.pos, a.pos), strings.Compare(a.id, b.id)) })
		slices.SortFunc(above, func(a, b placed) int { return cmp.Or(cmp.Compare(a.pos, b.pos), strings.Compare(a.id, b.id)) })
		for _, r := range append(below[:min(w, len(below))], above[:min(w, len(above))]...) {
			j, seen := at[r.id]
			if !seen {
				j = len(hits)
				at[r.id] = j
				h := mnemo.Hit{Record: mnemo.Record{ID: r.id}}
				if cq.Vector != nil {
					h.Similarity = cosine(cq.Vector, r.rec.Vector)
				}
				hits = append(hits, h)
			}
			hits[j].Score += nb.Weight * scores[i]
		}
	}
	slices.SortFunc(hits[found:], func(a, b mnemo.Hit) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	if cq.MinSimilarity != nil {
		hits = slices.DeleteFunc(hits, func(h mnemo.Hit) bool { return h.Similarity < *cq.MinSimilarity })
	}
	mnemo.SortHits(hits)
	return hits[:min(len(hits), cq.K)]
}

// cosine is the cosine similarity of a and b as float32.
func cosine(a, b []float32) float32 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return mnemo.Similarity(mnemo.Cosine, float32(1-dot/math.Sqrt(na*nb)))
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

// sequenceRecords returns records named by ids, at the positions pos, in
// the groups group (none when nil), each content "needle" when its ID is
// in needles and "hay" otherwise.
func sequenceRecords(ids []string, group []any, pos []any, needles ...string) []mnemo.Record {
	recs := make([]mnemo.Record, len(ids))
	for i, id := range ids {
		content := "hay"
		if slices.Contains(needles, id) {
			content = "needle"
		}
		meta := map[string]any{"p": pos[i]}
		if group != nil {
			meta["g"] = group[i]
		}
		recs[i] = mnemo.Record{ID: id, Vector: spreadVector(i), Content: content, Metadata: meta}
	}
	return recs
}

// gained returns the IDs of hits other than the query's matches (contents
// without "needle"), in ID order: the neighbours the spread found.
func gained(hits []mnemo.Hit, recs []mnemo.Record) []string {
	hay := map[string]bool{}
	for _, r := range recs {
		hay[r.ID] = !strings.Contains(r.Content, "needle")
	}
	var out []string
	for _, h := range hits {
		if hay[h.Record.ID] {
			out = append(out, h.Record.ID)
		}
	}
	slices.Sort(out)
	return out
}

// wantGained runs q and checks it against the reference and that the
// neighbours it found are want.
func wantGained(t *testing.T, c mnemo.Collection, recs []mnemo.Record, q mnemo.Query, want ...string) {
	t.Helper()
	got := checkSpread(t, c, recs, q)
	if g := gained(got, recs); !slices.Equal(g, want) {
		t.Fatalf("neighbours %v, want %v (hits %v)", g, want, scored(got))
	}
}

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
	c := spreadCollection(t, s, "spread-ties", recs, true)
	for _, k := range []int{1, 3, 4, 7} {
		t.Run(fmt.Sprint(k), func(t *testing.T) {
			q := mnemo.Query{Text: "needle", K: k, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5, Window: 3}}
			checkSpread(t, c, recs, q)
			q.Vector, q.Exact = []float32{1, 1}, true // hybrid
			checkSpread(t, c, recs, q)
		})
	}
}

// spreadHugePositions: positions float64 cannot tell apart (1e300
// twice; 2^53+1, stored as an integer, is 2^53 as a float64) and
// positions past 2^53, under every window: records at a candidate's
// float64 position are not its neighbours.
func spreadHugePositions(t *testing.T, s mnemo.Store) {
	positions := []any{1e300, 1e300, 1 << 53, 1<<53 + 2, 1<<53 - 1, 1<<53 + 4, 5, 6, int64(1<<53 + 1), int64(1<<53 + 3), -1e300}
	recs := make([]mnemo.Record, len(positions))
	for i, p := range positions {
		content := "hay stack"
		if i == 0 || i == 2 || i == 6 || i == 9 {
			content = "needle hay"
		}
		recs[i] = mnemo.Record{ID: fmt.Sprintf("r%02d", i), Vector: spreadVector(i), Content: content, Metadata: map[string]any{"p": p}}
	}
	c := spreadCollection(t, s, "spread-huge", recs, false)
	for _, w := range []int{0, 1, 2, 3, 16} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			checkSpread(t, c, recs, mnemo.Query{Text: "needle", K: 20, Spread: &mnemo.Spread{Position: "p", Weight: 1, Window: w}})
		})
	}
	// In float64 r08 (2^53+1) is at r02's 2^53, and r09 (2^53+3) at
	// r05's 2^53+4. Under window 1: r00 (1e300) lifts r05 (the first by
	// ID at 2^53+4) and not r01, at its own position; r02 lifts r04 and
	// r03, not r08; r06 lifts r10 (-1e300) and r07; r09 lifts r03 and
	// r00.
	wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 20, Spread: &mnemo.Spread{Position: "p", Weight: 1, Window: 1}},
		"r03", "r04", "r05", "r07", "r10")
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
	c := spreadCollection(t, s, "spread-groups", recs, false)
	for _, w := range []int{0, 2, 16} {
		for _, k := range []int{5, 40} {
			t.Run(fmt.Sprintf("window %d k %d", w, k), func(t *testing.T) {
				checkSpread(t, c, recs, mnemo.Query{Text: "needle", K: k, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5, Window: w}})
			})
		}
	}
	// Group 1 (g0, g2 as 1.0, g8) holds three records at each position:
	// the first by ID is the only neighbour on each side under window 1;
	// "1" (g1, g9) likewise, true (g3) and "true" (g4) alone.
	wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 40, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5}},
		"g0-p0", "g0-p2", "g1-p0", "g1-p2", "g3-p0", "g3-p2", "g4-p0", "g4-p2")
}

// spreadMinSimilarity: every other match is far from the query vector; a
// text query with Spread and MinSimilarity returns K hits that pass it.
// The positions are ten apart: each match's neighbours are the next
// records, whatever the distance.
func spreadMinSimilarity(t *testing.T, s mnemo.Store) {
	recs := make([]mnemo.Record, 12)
	for i := range recs {
		v := []float32{1, 0}
		if i%2 == 0 {
			v = []float32{-1, 0.01}
		}
		recs[i] = mnemo.Record{ID: fmt.Sprintf("r%02d", i), Vector: v, Content: "needle", Metadata: map[string]any{"p": i * 10}}
	}
	c := spreadCollection(t, s, "spread-min-similarity", recs, false)
	q := mnemo.Query{Text: "needle", Vector: []float32{1, 0}, Mode: mnemo.ModeText, K: 4, MinSimilarity: new(float32(0.5)),
		Spread: &mnemo.Spread{Position: "p", Weight: 0.5}}
	if g := checkSpread(t, c, recs, q); len(g) != 4 {
		t.Fatalf("%d hits, want 4: %v", len(g), scored(g))
	}
}

// spreadInterleaved: two conversations stored turn about (a at the even
// positions, b at the odd ones): a match's neighbours are the turns of
// its own conversation two positions away, never the other's.
func spreadInterleaved(t *testing.T, s mnemo.Store) {
	var names []string
	var group, pos []any
	for i := range 12 {
		g := []string{"a", "b"}[i%2]
		names = append(names, fmt.Sprintf("%s%02d", g, i))
		group, pos = append(group, g), append(pos, i)
	}
	recs := sequenceRecords(names, group, pos, "a06", "b07")
	c := spreadCollection(t, s, "spread-interleaved", recs, true)
	for _, w := range []int{0, 1, 2, 16} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			q := mnemo.Query{Text: "needle", K: 20, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5, Window: w}}
			checkSpread(t, c, recs, q)
			q.Vector, q.Exact = []float32{1, 1}, true
			checkSpread(t, c, recs, q)
		})
	}
	wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 20, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5}},
		"a04", "a08", "b05", "b09")
	wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 20, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5, Window: 2}},
		"a02", "a04", "a08", "a10", "b03", "b05", "b09", "b11")
}

// spreadGaps: positions 0, 10, 11 and 50 in one group: under window 1
// the neighbours of 10 are 0 and 11, those of 50 are 11 alone.
func spreadGaps(t *testing.T, s mnemo.Store) {
	recs := sequenceRecords([]string{"p00", "p10", "p11", "p50", "other"}, []any{"g", "g", "g", "g", "h"}, []any{0, 10, 11, 50, 9}, "p10")
	c := spreadCollection(t, s, "spread-gaps", recs, false)
	q := mnemo.Query{Text: "needle", K: 10, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5}}
	wantGained(t, c, recs, q, "p00", "p11")
	recs[1].Content, recs[3].Content = "hay", "needle"
	mustUpsert(t, c, recs[1], recs[3])
	wantGained(t, c, recs, q, "p11")
	q.Spread.Window = 2
	wantGained(t, c, recs, q, "p10", "p11")
	q.Vector = []float32{1, 1}
	checkSpread(t, c, recs, q)
}

// spreadEqualBelow: several records share the positions just below and
// above the match: their IDs decide which fill the window, not their
// storage order, and records at the match's own position take nothing.
func spreadEqualBelow(t *testing.T, s mnemo.Store) {
	names := []string{"m", "d", "b", "c", "a", "far", "same", "up-z", "up-y", "up-x"}
	pos := []any{5, 4, 4, 4, 3, 1, 5, 6, 6, 7}
	recs := sequenceRecords(names, nil, pos, "m")
	c := spreadCollection(t, s, "spread-equal", recs, true)
	for w, want := range map[int][]string{
		1: {"b", "up-y"},
		2: {"b", "c", "up-y", "up-z"},
		3: {"b", "c", "d", "up-x", "up-y", "up-z"},
		5: {"a", "b", "c", "d", "far", "up-x", "up-y", "up-z"},
	} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 20, Spread: &mnemo.Spread{Position: "p", Weight: 0.5, Window: w}}, want...)
		})
	}
}

// spreadFilterSkips: a filter that excludes the records next to the
// match: the nearest admitted ones are its neighbours.
func spreadFilterSkips(t *testing.T, s mnemo.Store) {
	names := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}
	group := []any{"c", "c", "c", "c", "c", "c", "c", "c", "c"}
	recs := sequenceRecords(names, group, []any{0, 1, 2, 3, 4, 5, 6, 7, 8}, "t4")
	for i := range recs {
		recs[i].Metadata["speaker"] = []string{"user", "bot", "bot", "user"}[i%4]
	}
	c := spreadCollection(t, s, "spread-filter", recs, false)
	f, err := mnemo.ParseFilter(`{"speaker": "user"}`)
	if err != nil {
		t.Fatal(err)
	}
	q := mnemo.Query{Text: "needle", K: 10, Filter: f, Spread: &mnemo.Spread{Group: "g", Position: "p", Weight: 0.5}}
	wantGained(t, c, recs, q, "t3", "t7")
	q.Spread.Window = 2
	wantGained(t, c, recs, q, "t0", "t3", "t7", "t8")
	q.Vector = []float32{1, 1}
	checkSpread(t, c, recs, q)
	q.Filter = nil
	q.Spread.Window = 1
	q.Vector = nil
	wantGained(t, c, recs, q, "t3", "t5")
}

// spreadSparse: no group, positions far apart and out of storage order,
// negative ones among them: the neighbours are the next records by
// position across the whole collection.
func spreadSparse(t *testing.T, s mnemo.Store) {
	names := []string{"e", "a", "d", "b", "c", "f", "g"}
	pos := []any{1_700_000_000_500, -40, 1_700_000_000_000, 0, 900, 1_700_000_009_000, 1.5}
	recs := sequenceRecords(names, nil, pos, "d", "b")
	c := spreadCollection(t, s, "spread-sparse", recs, true)
	wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 10, Spread: &mnemo.Spread{Position: "p", Weight: 0.5}}, "a", "c", "e")
	wantGained(t, c, recs, mnemo.Query{Text: "needle", K: 10, Spread: &mnemo.Spread{Position: "p", Weight: 0.5, Window: 2}}, "a", "c", "e", "f")
	q := mnemo.Query{Text: "needle", Vector: []float32{1, 1}, K: 10, Spread: &mnemo.Spread{Position: "p", Weight: 0.5, Window: 3}}
	checkSpread(t, c, recs, q)
}
