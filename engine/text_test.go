package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/analysis"
	"github.com/mnemodb/mnemo/engine/internal/bm25"
)

var textWords = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega apple banana cherry running runs")

func randomText(r *rand.Rand) string {
	n := 1 + r.IntN(12)
	w := make([]string, n)
	for i := range w {
		w[i] = textWords[r.IntN(r.IntN(len(textWords))+1)] // skewed: early words are common
	}
	return strings.Join(w, " ")
}

// analyzeDoc analyzes text as the content of a record of a collection with
// the default text config.
func analyzeDoc(text string) bm25.Doc { return textDocOf(mnemo.CollectionConfig{}, text, nil) }

func textVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// referenceBM25 scores the live records exactly as the definition says,
// from their contents, for comparison with the index.
func referenceBM25(docs map[string]string, query string, p mnemo.BM25) map[string]float64 {
	terms := map[string][]string{}
	total := 0
	n := 0
	for id, text := range docs {
		t := analysis.Terms(text)
		if len(t) > 0 {
			terms[id] = t
			total += len(t)
			n++
		}
	}
	df := map[string]int{}
	for _, t := range terms {
		seen := map[string]bool{}
		for _, w := range t {
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	avg := float64(total) / float64(n)
	scores := map[string]float64{}
	qtf := map[string]int{}
	for _, w := range analysis.Terms(query) {
		qtf[w]++
	}
	for id, t := range terms {
		tf := map[string]int{}
		for _, w := range t {
			tf[w]++
		}
		s := 0.0
		for w, q := range qtf {
			if tf[w] == 0 {
				continue
			}
			idf := math.Log(1 + (float64(n)-float64(df[w])+0.5)/(float64(df[w])+0.5))
			f := float64(tf[w])
			s += float64(q) * idf * f * (p.K1 + 1) / (f + p.K1*(1-p.B+p.B*float64(len(t))/avg))
		}
		if s > 0 {
			scores[id] = s
		}
	}
	return scores
}

// checkText compares a text query's hits with the reference scores.
func checkText(t *testing.T, c *Collection, docs map[string]string, query string, p *mnemo.BM25) {
	t.Helper()
	bp := *c.cfg.Text.BM25
	if p != nil {
		bp = *p
	}
	want := referenceBM25(docs, query, bp)
	hits, err := c.Query(ctx, mnemo.Query{Text: query, K: len(docs) + 1, BM25: p})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != len(want) {
		t.Fatalf("query %q: %d hits, want %d", query, len(hits), len(want))
	}
	for i, h := range hits {
		w, ok := want[h.Record.ID]
		if !ok || math.Abs(w-h.Score) > 1e-9*max(1, w) || h.TextRank != i+1 || h.TextScore != h.Score {
			t.Fatalf("query %q: hit %d %q score %v rank %d, want %v (found %v)", query, i, h.Record.ID, h.Score, h.TextRank, w, ok)
		}
		if h.Record.Content != docs[h.Record.ID] {
			t.Fatalf("hit %q has content %q, want %q", h.Record.ID, h.Record.Content, docs[h.Record.ID])
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("query %q: hits out of order at %d", query, i)
		}
	}
	// A short list (where the index skips walking common terms' lists)
	// is the top of the full one.
	for _, k := range []int{1, 3, 7} {
		top, err := c.Query(ctx, mnemo.Query{Text: query, K: k, BM25: p})
		if err != nil {
			t.Fatal(err)
		}
		if err := sameRanking(top, hits[:min(k, len(hits))]); err != nil {
			t.Fatalf("query %q, k %d: %v", query, k, err)
		}
	}
}

// sameRanking compares two rankings: the same scores (to rounding, as
// sums in another order) and the same records, except that records whose
// scores tie may trade places.
func sameRanking(a, b []mnemo.Hit) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d hits, want %d", len(a), len(b))
	}
	close := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(y)) }
	for i := range a {
		if !close(a[i].Score, b[i].Score) {
			return fmt.Errorf("hit %d scores %v, want %v", i, a[i].Score, b[i].Score)
		}
		if a[i].Record.ID == b[i].Record.ID {
			continue
		}
		tie := false
		for j := range b {
			if b[j].Record.ID == a[i].Record.ID && close(b[j].Score, a[i].Score) {
				tie = true
			}
		}
		if !tie {
			return fmt.Errorf("hit %d is %q (%v), want %q (%v)", i, a[i].Record.ID, a[i].Score, b[i].Record.ID, b[i].Score)
		}
	}
	return nil
}

// TestTextBM25MatchesReference: under random upserts, overwrites and
// deletes the index's BM25 scores equal a from-scratch computation, before
// and after a reopen.
func TestTextBM25MatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 4})
	docs := map[string]string{}
	for step := range 400 {
		id := fmt.Sprintf("r%d", r.IntN(120))
		if r.IntN(5) == 0 {
			if _, err := c.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(docs, id)
		} else {
			text := randomText(r)
			if r.IntN(10) == 0 {
				text = "?!"
			}
			if _, err := c.Upsert(ctx, mnemo.Record{ID: id, Vector: textVec(r, 4), Content: text}); err != nil {
				t.Fatal(err)
			}
			docs[id] = text
		}
		if step%50 == 49 {
			checkText(t, c, docs, "alpha running", nil)
		}
	}
	queries := []string{"alpha", "beta beta gamma", "omega psi", "run", "RUNNING apples", "nothing-here", "?"}
	for _, q := range queries {
		checkText(t, c, docs, q, nil)
		checkText(t, c, docs, q, &mnemo.BM25{K1: 0.9, B: 0.4})
	}
	db.Close()
	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("t")
	for _, q := range queries {
		checkText(t, c, docs, q, nil)
	}
	if ps, err := db.Verify(ctx); err != nil || len(ps) > 0 {
		t.Fatalf("verify: %v %v", ps, err)
	}
}

// TestTextFieldsAndFilter: listed metadata fields are searchable and a
// filter restricts text hits.
func TestTextFieldsAndFilter(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Fields: []string{"speaker", "tags"}}})
	recs := []mnemo.Record{
		{ID: "a", Vector: []float32{1, 0}, Content: "I went hiking", Metadata: map[string]any{"speaker": "Caroline", "session": 1}},
		{ID: "b", Vector: []float32{0, 1}, Content: "Caroline told me about it", Metadata: map[string]any{"speaker": "Melanie", "session": 2}},
		{ID: "c", Vector: []float32{1, 1}, Content: "nothing", Metadata: map[string]any{"tags": []any{"hiking", 3}}},
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	ids := func(hits []mnemo.Hit) []string {
		var s []string
		for _, h := range hits {
			s = append(s, h.Record.ID)
		}
		slices.Sort(s)
		return s
	}
	hits, err := c.Query(ctx, mnemo.Query{Text: "caroline"})
	if err != nil || !slices.Equal(ids(hits), []string{"a", "b"}) {
		t.Fatalf("caroline: %v %v", ids(hits), err)
	}
	hits, _ = c.Query(ctx, mnemo.Query{Text: "hike"})
	if !slices.Equal(ids(hits), []string{"a", "c"}) {
		t.Fatalf("hike: %v", ids(hits))
	}
	f, _ := mnemo.ParseFilter(`{"session": 2}`)
	hits, _ = c.Query(ctx, mnemo.Query{Text: "caroline", Filter: f})
	if !slices.Equal(ids(hits), []string{"b"}) {
		t.Fatalf("caroline with filter: %v", ids(hits))
	}
	hits, _ = c.Query(ctx, mnemo.Query{Text: "caroline", Vector: []float32{0, 1}, Filter: f})
	if !slices.Equal(ids(hits), []string{"b"}) || hits[0].VectorRank != 1 || hits[0].TextRank != 1 {
		t.Fatalf("hybrid with filter: %+v", hits)
	}
}

// TestHybrid: both sides' ranks and scores are reported, the fused order
// follows the formula, and a hit found by one side only still carries its
// distance.
func TestHybrid(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
	recs := []mnemo.Record{
		{ID: "vec", Vector: []float32{1, 0}, Content: "unrelated words"},
		{ID: "both", Vector: []float32{1, 0.2}, Content: "the zebra crossing"},
		{ID: "text", Vector: []float32{-1, 0.1}, Content: "zebra zebra zebra"},
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	q := mnemo.Query{Vector: []float32{1, 0}, Text: "zebra", K: 3, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF, VectorWeight: 0.5, Depth: 2}}
	hits, plan, err := c.QueryPlan(ctx, q)
	if err != nil || plan != PlanGraph && plan != PlanExact {
		t.Fatal(err, plan)
	}
	got := map[string]mnemo.Hit{}
	for _, h := range hits {
		got[h.Record.ID] = h
	}
	if len(hits) != 3 || hits[0].Record.ID != "both" {
		t.Fatalf("hits %+v, want 'both' first", hits)
	}
	if h := got["both"]; h.VectorRank != 2 || h.TextRank != 2 || math.Abs(h.Score-(0.5/62+0.5/62)) > 1e-12 {
		t.Fatalf("both: %+v", h)
	}
	if h := got["text"]; h.VectorRank != 0 || h.TextRank != 1 || h.Distance < 1.5 || h.Similarity > -0.5 {
		t.Fatalf("text-only hit: %+v (its distance must be filled)", h)
	}
	if h := got["vec"]; h.VectorRank != 1 || h.TextRank != 0 || h.TextScore != 0 || h.Distance > 1e-6 {
		t.Fatalf("vector-only hit: %+v", h)
	}
	// A minimum similarity applies to every hit, whichever side found it.
	q.MinSimilarity = new(float32(0))
	hits, _ = c.Query(ctx, q)
	if len(hits) != 2 {
		t.Fatalf("with MinSimilarity 0: %+v", hits)
	}
	// Weighted fusion: with the text side weighted up, the pure text match
	// wins.
	q.MinSimilarity = nil
	q.Fusion = mnemo.Fusion{Method: mnemo.FusionWeighted, VectorWeight: 0.1, Depth: 2}
	hits, _ = c.Query(ctx, q)
	if hits[0].Record.ID != "text" {
		t.Fatalf("weighted 0.1: %+v", hits)
	}
	// Text mode with a vector fills distances too.
	hits, _ = c.Query(ctx, mnemo.Query{Mode: mnemo.ModeText, Text: "zebra", Vector: []float32{1, 0}})
	if len(hits) != 2 || hits[0].Record.ID != "text" || hits[0].Distance < 1.5 {
		t.Fatalf("text mode with vector: %+v", hits)
	}
}

func TestQueryModeErrors(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2})
	off := mustCollection(t, db, "off", mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Disabled: true}})
	v := []float32{1, 0}
	bad := []struct {
		c *Collection
		q mnemo.Query
	}{
		{c, mnemo.Query{Mode: "fuzzy", Vector: v}},
		{c, mnemo.Query{Mode: mnemo.ModeHybrid, Text: "x"}},
		{c, mnemo.Query{Mode: mnemo.ModeVector, Text: "x"}},
		{c, mnemo.Query{Text: "x", MinSimilarity: new(float32(0.5))}},
		{c, mnemo.Query{Text: "x", Vector: v, Fusion: mnemo.Fusion{Method: "max"}}},
		{c, mnemo.Query{Text: "x", Vector: v, Fusion: mnemo.Fusion{VectorWeight: 1}}},
		{c, mnemo.Query{Text: "x", Vector: v, Fusion: mnemo.Fusion{VectorWeight: math.NaN()}}},
		{c, mnemo.Query{Text: "x", Vector: v, Fusion: mnemo.Fusion{Depth: -1}}},
		{c, mnemo.Query{Text: "x", BM25: &mnemo.BM25{K1: -1, B: 0.5}}},
		{c, mnemo.Query{Text: "x", BM25: &mnemo.BM25{K1: 1, B: 2}}},
		{off, mnemo.Query{Text: "x"}},
		{off, mnemo.Query{Text: "x", Vector: v}},
	}
	for _, b := range bad {
		if _, err := b.c.Query(ctx, b.q); err == nil {
			t.Errorf("query %+v on %s: no error", b.q, b.c.Name())
		}
	}
	// Text with no terms matches nothing; it is not an error.
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "q", Vector: v, Content: "?"}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"?", "🙂", "\xff\xfe"} {
		if hits, err := c.Query(ctx, mnemo.Query{Text: text}); err != nil || len(hits) != 0 {
			t.Errorf("text %q: %v %v", text, hits, err)
		}
	}
	if _, err := db.CreateCollection(ctx, "bad", mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Fields: []string{"a", "a"}}}); err == nil {
		t.Error("repeated text field accepted")
	}
	if _, err := db.CreateCollection(ctx, "bad", mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Analyzer: "v0"}}); err == nil {
		t.Error("unknown analyzer accepted")
	}
	// The same config again returns the collection; another is refused.
	if _, err := db.CreateCollection(ctx, "t", mnemo.CollectionConfig{Dimension: 2}); err != nil {
		t.Error(err)
	}
	if _, err := db.CreateCollection(ctx, "t", mnemo.CollectionConfig{Dimension: 2, Text: mnemo.TextConfig{Fields: []string{"a"}}}); err == nil {
		t.Error("other text config accepted for an existing collection")
	}
}

// TestTextEntriesRebuilt: entries that are missing (a database from before
// the full-text index), damaged or orphaned are rebuilt from the records
// at open, and Verify is then clean.
func TestTextEntriesRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2})
	docs := map[string]string{}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		id := fmt.Sprint(i)
		docs[id] = randomText(r)
		if _, err := c.Upsert(ctx, mnemo.Record{ID: id, Vector: textVec(r, 2), Content: docs[id]}); err != nil {
			t.Fatal(err)
		}
	}
	b := db.pdb.NewBatch()
	b.Delete(textKey(c.id, 3), nil)                                   // missing
	b.Set(textKey(c.id, 4), []byte{1, 200, 7}, nil)                   // damaged
	b.Set(textKey(c.id, 9999), bm25.Encode(analyzeDoc("alpha")), nil) // orphaned
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
	b.Close()
	db.Close()
	db = mustOpen(t, dir, nil)
	c, _ = db.Collection("t")
	checkText(t, c, docs, "alpha beta", nil)
	st, err := c.Stats(ctx)
	if err != nil || st.TextRebuilt != 2 {
		t.Fatalf("stats %+v %v: want 2 entries rebuilt", st, err)
	}
	db.Close()
	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, _ = db.Collection("t")
	checkText(t, c, docs, "alpha beta", nil)
	if st, _ := c.Stats(ctx); st.TextRebuilt != 0 {
		t.Fatalf("second open rebuilt %d entries", st.TextRebuilt)
	}
	if ps, err := db.Verify(ctx); err != nil || len(ps) > 0 {
		t.Fatalf("verify: %v %v", ps, err)
	}
	// An entry that disagrees with its record is found.
	if err := db.pdb.Set(textKey(c.id, 5), bm25.Encode(analyzeDoc("zzz")), nil); err != nil {
		t.Fatal(err)
	}
	if ps, err := db.Verify(ctx); err != nil || len(ps) != 1 || !strings.Contains(ps[0], "not the analysis") {
		t.Fatalf("verify after a bad entry: %q %v", ps, err)
	}
}

// TestSpread: a match lifts the records beside it in its own sequence,
// within the filter, and only there.
func TestSpread(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2})
	var recs []mnemo.Record
	for _, s := range []string{"a", "b"} {
		for p := range 5 {
			content := fmt.Sprintf("turn %d", p)
			if s == "a" && p == 2 {
				content = "the zebra answer"
			}
			recs = append(recs, mnemo.Record{ID: fmt.Sprintf("%s%d", s, p), Vector: []float32{1, float32(p)}, Content: content,
				Metadata: map[string]any{"session": s, "pos": p, "keep": p != 3}})
		}
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	got := func(q mnemo.Query) map[string]float64 {
		t.Helper()
		hits, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, h := range hits {
			m[h.Record.ID] = h.Score
		}
		return m
	}
	nb := &mnemo.Spread{Group: "session", Position: "pos", Weight: 0.5}
	m := got(mnemo.Query{Text: "zebra", Spread: nb})
	if len(m) != 3 || m["a1"] != 0.5*m["a2"] || m["a3"] != 0.5*m["a2"] || m["a2"] <= 0 {
		t.Fatalf("neighbours of a2: %v", m)
	}
	f, _ := mnemo.ParseFilter(`{"keep": true}`)
	// The nearest admitted record above a2 is a4.
	if m := got(mnemo.Query{Text: "zebra", Spread: nb, Filter: f}); len(m) != 3 || m["a3"] != 0 || m["a4"] != 0.5*m["a2"] {
		t.Fatalf("with a filter excluding a3: %v", m)
	}
	// One sequence: a1 and b1 share position 1, a3 and b3 position 3;
	// the two nearest on each side are those.
	if m := got(mnemo.Query{Text: "zebra", Spread: &mnemo.Spread{Position: "pos", Weight: 0.5, Window: 2}}); len(m) != 5 || m["a1"] == 0 || m["b1"] == 0 || m["a3"] == 0 || m["b3"] == 0 {
		t.Fatalf("one sequence, window 2: %v", m)
	}
	hm := got(mnemo.Query{Text: "zebra", Vector: []float32{1, 2}, Spread: nb, Fusion: mnemo.Fusion{Method: mnemo.FusionWeighted}})
	if hm["a1"] == 0 || hm["b1"] != 0 && hm["b1"] >= hm["a1"] {
		t.Fatalf("hybrid with neighbours: %v", hm)
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 0}, Spread: nb}); err == nil {
		t.Fatal("neighbours accepted in a vector query")
	}
}

// TestTextBadInput: odd text is indexed by documented rules, never a
// crash: no terms, a 1 MB document with more distinct words than one
// record indexes, mixed scripts; invalid UTF-8 is refused as before.
func TestTextBadInput(t *testing.T) {
	db := mustOpen(t, filepath.Join(t.TempDir(), "db"), nil)
	defer db.Close()
	c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2})
	v := []float32{1, 0}
	r := rand.New(rand.NewPCG(5, 6))
	var big strings.Builder
	for big.Len() < 1<<20 {
		fmt.Fprintf(&big, "w%x ", r.Uint32())
	}
	big.WriteString("needle needle")
	recs := []mnemo.Record{
		{ID: "empty", Vector: v},
		{ID: "punct", Vector: v, Content: "?!… 🙂"},
		{ID: "big", Vector: v, Content: big.String()},
		{ID: "mixed", Vector: v, Content: "Meeting in Tokyo (東京) with Дмитрий about naïve Bayes"},
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "bad", Vector: v, Content: "bad \xff"}); !errors.Is(err, mnemo.ErrInvalidRecord) {
		t.Fatalf("invalid UTF-8 content: %v", err)
	}
	st, _ := c.Stats(ctx)
	if st.TextTerms > mnemo.MaxTextTerms+40 {
		t.Fatalf("%d terms indexed; one record adds at most %d", st.TextTerms, mnemo.MaxTextTerms)
	}
	for q, want := range map[string]string{"needle": "big", "東京": "mixed", "дмитрий": "mixed", "tokyo bayes": "mixed"} {
		hits, err := c.Query(ctx, mnemo.Query{Text: q})
		if err != nil || len(hits) == 0 || hits[0].Record.ID != want {
			t.Errorf("query %q: %v, %v (want %q first)", q, hits, err, want)
		}
	}
	if ps, err := db.Verify(ctx); err != nil || len(ps) > 0 {
		t.Fatalf("verify: %v %v", ps, err)
	}
}
