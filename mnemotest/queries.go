package mnemotest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo"
)

func roundTrip(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// corpus returns n records of dimension dim with words from a small
// vocabulary (so that terms repeat across records) and a "group"
// metadata field.
func corpus(seed uint64, n, dim int) []mnemo.Record {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := strings.Fields("memory agent tool search paul google works cat dog running runs ran jumps over lazy fox the a of and database vector index query text hybrid fusion rank score city tokyo paris weather rain sun coffee tea meeting project deadline")
	recs := make([]mnemo.Record, n)
	for i := range recs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		var sb strings.Builder
		for range 2 + r.IntN(12) {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteByte(' ')
		}
		recs[i] = mnemo.Record{ID: fmt.Sprintf("doc-%04d", i), Vector: v, Content: sb.String(),
			Metadata: map[string]any{"group": float64(i % 5), "speaker": []string{"alice", "bob", "carol"}[i%3],
				"session": fmt.Sprintf("s%d", i/40), "pos": float64(i % 40)}}
	}
	return recs
}

// sameHits compares hits with the reference's: the same IDs in the same
// order (ties in score may differ in order), with scores and distances
// equal within float tolerance.
func sameHits(t *testing.T, what string, got, want []mnemo.Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, the engine %d:\n got %v\nwant %v", what, len(got), len(want), ids(got), ids(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Record.ID != w.Record.ID && !near(g.Score, w.Score, 1e-6) {
			t.Fatalf("%s: hit %d is %q (score %v), the engine's %q (score %v)\n got %v\nwant %v", what, i, g.Record.ID, g.Score, w.Record.ID, w.Score, ids(got), ids(want))
		}
		if !near(g.Score, w.Score, 1e-5) || !near(float64(g.Distance), float64(w.Distance), 1e-4) ||
			!near(float64(g.Similarity), float64(w.Similarity), 1e-4) || !near(g.TextScore, w.TextScore, 1e-5) {
			t.Errorf("%s: hit %d %q: score %v distance %v similarity %v text %v; the engine %v %v %v %v",
				what, i, g.Record.ID, g.Score, g.Distance, g.Similarity, g.TextScore, w.Score, w.Distance, w.Similarity, w.TextScore)
		}
		if g.Record.ID == w.Record.ID && (g.VectorRank == 0) != (w.VectorRank == 0) || (g.TextRank == 0) != (w.TextRank == 0) {
			t.Errorf("%s: hit %d %q: ranks %d/%d, the engine's %d/%d", what, i, g.Record.ID, g.VectorRank, g.TextRank, w.VectorRank, w.TextRank)
		}
	}
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func ids(hits []mnemo.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Record.ID
	}
	return out
}

// pair is a collection of the store under test and the same collection in
// the reference engine, with the same records.
func pair(t *testing.T, s mnemo.Store, name string, cfg mnemo.CollectionConfig, recs []mnemo.Record) (got, want mnemo.Collection) {
	t.Helper()
	got = mustCreate(t, s, name, cfg)
	want = mustCreate(t, reference(t), name, cfg)
	for i := 0; i < len(recs); i += 100 {
		batch := recs[i:min(i+100, len(recs))]
		mustUpsert(t, got, batch...)
		mustUpsert(t, want, batch...)
	}
	return got, want
}

// pairReversed is pair with recs stored last first, one per batch: a
// backend that breaks ties by storage order instead of ID shows it.
func pairReversed(t *testing.T, s mnemo.Store, name string, cfg mnemo.CollectionConfig, recs []mnemo.Record) (got, want mnemo.Collection) {
	t.Helper()
	got = mustCreate(t, s, name, cfg)
	want = mustCreate(t, reference(t), name, cfg)
	for i := len(recs) - 1; i >= 0; i-- {
		mustUpsert(t, got, recs[i])
		mustUpsert(t, want, recs[i])
	}
	return got, want
}

func testVectorQuery(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	recs := corpus(1, 300, 8)
	for _, m := range []mnemo.Metric{mnemo.Cosine, mnemo.Dot, mnemo.L2} {
		t.Run(fmt.Sprint(m), func(t *testing.T) {
			got, want := pair(t, s, fmt.Sprintf("vec-%d", m), mnemo.CollectionConfig{Dimension: 8, Metric: m}, recs)
			f, _ := mnemo.ParseFilter(`{"group": {"$in": [1, 3]}}`)
			r := rand.New(rand.NewPCG(2, 2))
			for i := range 20 {
				q := mnemo.Query{Vector: corpus(uint64(100+i), 1, 8)[0].Vector, K: 10, Exact: true}
				if i%2 == 1 {
					q.Filter = f
				}
				if i%3 == 0 {
					q.WithVectors = true
				}
				if i%4 == 0 {
					q.MinSimilarity = new(float32(float32(r.Float64()*0.5 - 0.2)))
				}
				g, err := got.Query(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				w, err := want.Query(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("query %d", i), g, w)
				for j, h := range g {
					if q.WithVectors != (h.Record.Vector != nil) {
						t.Fatalf("hit %d: vector %v with WithVectors %v", j, h.Record.Vector, q.WithVectors)
					}
					if h.Record.Content != w[j].Record.Content || !valueEqual(h.Record.Metadata, w[j].Record.Metadata) {
						t.Fatalf("hit %d: record %+v, the engine's %+v", j, h.Record, w[j].Record)
					}
				}
			}
			// Approximate search: most of the exact answer, K hits.
			q := mnemo.Query{Vector: recs[7].Vector, K: 10}
			g, err := got.Query(ctx, q)
			if err != nil || len(g) != 10 || m != mnemo.Dot && g[0].Record.ID != "doc-0007" {
				t.Fatalf("approximate query: %v, %v", ids(g), err)
			}
			// A selective filter still gives min(K, admitted) hits.
			sel, _ := mnemo.ParseFilter(`{"$and": [{"group": 2}, {"speaker": "alice"}]}`)
			admitted := len(matching(sel, recs))
			g, err = got.Query(ctx, mnemo.Query{Vector: recs[0].Vector, K: 50, Filter: sel})
			if err != nil || len(g) != min(50, admitted) {
				t.Fatalf("selective filter: %d hits, %v; want %d", len(g), err, min(50, admitted))
			}
		})
	}
}

func testTextQuery(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	recs := corpus(3, 200, 4)
	cfg := mnemo.CollectionConfig{Dimension: 4, Text: mnemo.TextConfig{Fields: []string{"speaker"}}}
	got, want := pair(t, s, "text", cfg, recs)
	f, _ := mnemo.ParseFilter(`{"group": {"$ne": 0}}`)
	queries := []mnemo.Query{
		{Text: "paul google"},
		{Text: "Running RAN runs", K: 5},
		{Text: "the the memory", K: 20},
		{Text: "alice coffee", Filter: f},
		{Text: "tokyo", BM25: &mnemo.BM25{K1: 2, B: 0.3}},
		{Text: "?!"},
		{Text: "nothing-matches-this"},
		{Text: "vector index", Vector: recs[3].Vector, Mode: mnemo.ModeText},
		{Text: "vector index", Vector: recs[3].Vector, Mode: mnemo.ModeText, MinSimilarity: new(float32(0))},
		{Text: "paul tokyo", Spread: &mnemo.Spread{Group: "session", Position: "pos", Weight: 0.5}},
		{Text: "coffee", K: 15, Spread: &mnemo.Spread{Group: "group", Position: "pos", Weight: 1, Window: 3}, Filter: f},
		{Text: "rain sun", Vector: recs[9].Vector, Mode: mnemo.ModeText, Spread: &mnemo.Spread{Position: "pos", Weight: 0.2}},
	}
	for i, q := range queries {
		if q.Spread != nil { // the spec, not the engine (see testSpread)
			t.Run(fmt.Sprintf("spread query %d", i), func(t *testing.T) { checkSpread(t, got, recs, q) })
			continue
		}
		g, err := got.Query(ctx, q)
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		w, err := want.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("text query %d %q", i, q.Text), g, w)
	}
	// Deletes and replacements update the statistics.
	for _, c := range []mnemo.Collection{got, want} {
		if _, err := c.Delete(ctx, "doc-0001", "doc-0002", "doc-0050"); err != nil {
			t.Fatal(err)
		}
		mustUpsert(t, c, mnemo.Record{ID: "doc-0003", Vector: recs[3].Vector, Content: "paul paul paul"})
	}
	g, _ := got.Query(ctx, mnemo.Query{Text: "paul"})
	w, _ := want.Query(ctx, mnemo.Query{Text: "paul"})
	sameHits(t, "after writes", g, w)
}

func testHybridQuery(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	recs := corpus(5, 250, 6)
	got, want := pair(t, s, "hybrid", mnemo.CollectionConfig{Dimension: 6}, recs)
	f, _ := mnemo.ParseFilter(`{"speaker": {"$in": ["alice", "carol"]}}`)
	for i := range 12 {
		q := mnemo.Query{Vector: recs[i*7].Vector, Text: "memory agent paul", K: 10, Exact: true}
		switch i % 4 {
		case 1:
			q.Fusion = mnemo.Fusion{Method: mnemo.FusionWeighted, VectorWeight: 0.3}
		case 2:
			q.Fusion = mnemo.Fusion{RRFK: 10, Depth: 20}
			q.Filter = f
		case 3:
			q.MinSimilarity = new(float32(0.1))
			q.Fusion.Method = mnemo.FusionRRF
		}
		if i >= 8 { // the spec, not the engine (see testSpread)
			q.Spread = &mnemo.Spread{Group: "session", Position: "pos", Weight: 0.3, Window: i - 7}
			t.Run(fmt.Sprintf("spread query %d", i), func(t *testing.T) { checkSpread(t, got, recs, q) })
			continue
		}
		g, err := got.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		w, err := want.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("hybrid query %d", i), g, w)
	}
}

func testConcurrentWriters(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "concurrent", mnemo.CollectionConfig{Dimension: 4})
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rec := mnemo.Record{ID: fmt.Sprintf("w%d-%d", w, i), Vector: []float32{1, float32(w), float32(i), 1}, Content: "x"}
				if _, err := c.Upsert(ctx, rec); err != nil {
					errs <- err
					return
				}
				if _, err := c.Query(ctx, mnemo.Query{Vector: rec.Vector, K: 3}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, err := c.Count(ctx); err != nil || n != writers*each {
		t.Fatalf("Count = %d, %v; want %d", n, err, writers*each)
	}
}
