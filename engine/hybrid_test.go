package engine

import (
	"github.com/mnemodb/mnemo"

	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/analysis"
	"github.com/mnemodb/mnemo/engine/internal/bm25"
	"github.com/mnemodb/mnemo/index"
)

// referenceHybrid answers a hybrid query (of a collection small enough
// for the exact vector plan) the obvious way: every record's distance,
// every record's BM25 score (the full-text index searched for more than
// it holds, so that no list is cut), each side's best Fusion depth with
// equal scores ordered by ID, fused, spread, every distance filled at
// once, ranked, MinSimilarity applied, the best K kept.
func referenceHybrid(t *testing.T, c *Collection, q mnemo.Query) []mnemo.Hit {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.ids)
	admit := func(key uint64) bool { return q.Filter.Match(c.meta[key]) }
	depth := mnemo.FusionDepth(q.Fusion, q.K)
	vres, err := c.idx.Search(nil, q.Vector, n, &index.SearchOptions{Exact: true, Filter: admit})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(vres, func(a, b index.Result) int {
		return cmp.Or(cmp.Compare(a.Distance, b.Distance), strings.Compare(c.keys[a.Key], c.keys[b.Key]))
	})
	p := *c.cfg.Text.BM25
	tres := c.text.Search(analysis.Terms(q.Text), n+1, p, admit)
	slices.SortStableFunc(tres, func(a, b bm25.Result) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(c.keys[a.Key], c.keys[b.Key]))
	})
	vres, tres = vres[:min(depth, len(vres))], tres[:min(depth, len(tres))]
	var hits []mnemo.Hit
	at := map[uint64]int{}
	for i, r := range vres {
		sim := mnemo.Similarity(c.cfg.Metric, r.Distance)
		at[r.Key] = len(hits)
		hits = append(hits, mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}, Distance: r.Distance, Similarity: sim, VectorRank: i + 1})
	}
	for i, r := range tres {
		j, ok := at[r.Key]
		if !ok {
			j = len(hits)
			hits = append(hits, mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}})
		}
		hits[j].TextRank, hits[j].TextScore = i+1, r.Score
	}
	mnemo.FuseScores(hits, q.Fusion)
	if q.Spread != nil {
		keys := make([]uint64, len(hits))
		for i, h := range hits {
			keys[i] = c.ids[h.Record.ID]
		}
		hits = c.spread(q, hits, keys, admittedKeys{})
	}
	var keys []uint64
	for _, h := range hits {
		keys = append(keys, c.ids[h.Record.ID])
	}
	dist, err := c.idx.Search(nil, q.Vector, len(keys), &index.SearchOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[uint64]float32{}
	for _, r := range dist {
		byKey[r.Key] = r.Distance
	}
	for i := range hits {
		if hits[i].VectorRank == 0 {
			d := byKey[c.ids[hits[i].Record.ID]]
			hits[i].Distance, hits[i].Similarity = d, mnemo.Similarity(c.cfg.Metric, d)
		}
	}
	mnemo.SortHits(hits)
	if q.MinSimilarity != nil {
		hits = slices.DeleteFunc(hits, func(h mnemo.Hit) bool { return h.Similarity < *q.MinSimilarity })
	}
	return hits[:min(q.K, len(hits))]
}

// TestHybridMatchesReference: hybrid queries, with and without spreading,
// filters (selective and broad), MinSimilarity, both fusions and several
// K, return exactly the reference's hits: the same records in the same
// order with the same scores, distances and ranks, to the bit. The text
// is skewed (a few words in most records) so that the full-text search
// cuts long lists and meets equal scores at its depth.
func TestHybridMatchesReference(t *testing.T) {
	const n, dim = 3000, 16
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: dim})
	texts := benchSentences(n, 3)
	r := rand.New(rand.NewPCG(4, 5))
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	var recs []mnemo.Record
	for i := range n {
		recs = append(recs, mnemo.Record{ID: fmt.Sprintf("r%d", i), Vector: randVec(), Content: texts[i],
			Metadata: map[string]any{"g": fmt.Sprintf("g%d", i/20), "pos": i, "m": i % 7}})
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	selective, _ := mnemo.ParseFilter(`{"g": {"$in": ["g3", "g40", "g77"]}}`)
	broad, _ := mnemo.ParseFilter(`{"m": {"$ne": 3}}`)
	minSim := float32(0.1)
	spread := &mnemo.Spread{Group: "g", Position: "pos", Weight: 0.5, Window: 2}
	cases := []struct {
		name string
		set  func(*mnemo.Query)
	}{
		{"plain", func(*mnemo.Query) {}},
		{"K 1", func(q *mnemo.Query) { q.K = 1 }},
		{"K 40", func(q *mnemo.Query) { q.K = 40 }},
		{"rrf", func(q *mnemo.Query) { q.Fusion = mnemo.Fusion{Method: mnemo.FusionRRF} }},
		{"depth 5", func(q *mnemo.Query) { q.Fusion.Depth = 5 }},
		{"spread", func(q *mnemo.Query) { q.Spread = spread }},
		{"spread, K 3", func(q *mnemo.Query) { q.Spread, q.K = spread, 3 }},
		{"selective filter", func(q *mnemo.Query) { q.Filter = selective }},
		{"selective filter, spread", func(q *mnemo.Query) { q.Filter, q.Spread = selective, spread }},
		{"broad filter", func(q *mnemo.Query) { q.Filter = broad }},
		{"broad filter, spread", func(q *mnemo.Query) { q.Filter, q.Spread = broad, spread }},
		{"min similarity", func(q *mnemo.Query) { q.MinSimilarity = &minSim }},
		{"min similarity, spread", func(q *mnemo.Query) { q.MinSimilarity, q.Spread = &minSim, spread }},
	}
	questions := benchQuestions(30, 6)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, text := range questions {
				q := mnemo.Query{Vector: randVec(), Text: text, Mode: mnemo.ModeHybrid, K: 10}
				tc.set(&q)
				got, err := c.Query(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				checked, _, err := mnemo.CheckQuery(c.Name(), c.cfg, q)
				if err != nil {
					t.Fatal(err)
				}
				want := referenceHybrid(t, c, checked)
				if len(got) != len(want) {
					t.Fatalf("query %d %q: %d hits, want %d", i, text, len(got), len(want))
				}
				for j := range got {
					g, w := got[j], want[j]
					if g.Record.ID != w.Record.ID || g.Score != w.Score || g.Distance != w.Distance || g.Similarity != w.Similarity ||
						g.VectorRank != w.VectorRank || g.TextRank != w.TextRank || g.TextScore != w.TextScore {
						t.Fatalf("query %d %q: hit %d is\n%+v, want\n%+v", i, text, j, g, w)
					}
				}
			}
		})
	}
}
