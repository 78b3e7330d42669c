package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

func rep(w string, n int) string {
	return strings.TrimSpace(strings.Repeat(w+" ", n))
}

// TestProbeThetaRounding: a rare term (a seed) and three common terms
// (not seeds: more than seedPostings postings) whose bounds are loose
// (a record with tf 3000, and a deleted short one whose min_len stays),
// so that with a large K1 every common term is essential and the
// non-essential set is empty. The threshold theta of sfull is a record's
// score summed as seed + (e1 + e2 + e3); the same record's candidate score
// in part/cand is summed ((seed + e1) + e2) + e3, one ulp lower, and cand
// keeps only x.score + rest.bound*boundSlack >= theta with rest.bound = 0:
// the k-th record itself is pruned and the query returns fewer than K hits
// (text.go:335-375).
func TestProbeThetaRounding(t *testing.T) {
	serverDSN(t)
	p := newProbePair(t, "theta", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
	r := rand.New(rand.NewPCG(7, 7))
	var recs []mnemo.Record
	common := []string{"alpha", "beta", "gamma"}
	for i := range 700 {
		var words []string
		for _, w := range common {
			if r.IntN(100) < 45 {
				words = append(words, w)
			}
		}
		words = append(words, fmt.Sprintf("filler%d", i%50))
		recs = append(recs, mnemo.Record{ID: fmt.Sprintf("f%03d", i), Vector: []float32{1, 2}, Content: strings.Join(words, " ")})
	}
	recs = append(recs, mnemo.Record{ID: "big", Vector: []float32{1, 2}, Content: rep("alpha", 3000) + " " + rep("beta", 3000) + " " + rep("gamma", 3000)})
	recs = append(recs, mnemo.Record{ID: "short", Vector: []float32{1, 2}, Content: "alpha beta gamma"})
	p.upsert(t, recs...)
	p.del(t, "short") // its short length stays in the bounds
	for round := range 60 {
		var zs []mnemo.Record
		for j := range 4 {
			zs = append(zs, mnemo.Record{ID: fmt.Sprintf("z%d", j), Vector: []float32{1, 2},
				Content: fmt.Sprintf("%s %s %s %s %s", rep("zeta", 1+r.IntN(2)), rep("alpha", 1+r.IntN(4)), rep("beta", 1+r.IntN(5)), rep("gamma", 1+r.IntN(5)), rep("pad", 100+r.IntN(300)))})
		}
		p.upsert(t, zs...)
		for _, qn := range []int{2, 3, 5, 9} {
			for _, k := range []int{1, 2, 3, 4} {
				q := mnemo.Query{Mode: mnemo.ModeText, Text: "zeta " + rep("alpha", qn) + " " + rep("beta", qn+round%3) + " " + rep("gamma", qn+round%2), K: k,
					BM25: &mnemo.BM25{K1: []float64{20, 50, 100}[round%3], B: []float64{0, 0.5}[round%2]}}
				if !p.compare(t, fmt.Sprintf("round %d: %d hits wanted, query %q bm25 %+v", round, k, q.Text, *q.BM25), q) {
					for _, sel := range []string{"SELECT * FROM th", "SELECT * FROM ne", "SELECT * FROM sfull", "SELECT * FROM part ORDER BY score DESC LIMIT 5"} {
						t.Logf("%s: %v", sel, postgres.ProbeTextCTE(t, p.pg, q, sel))
					}
					t.FailNow()
				}
			}
		}
	}
}
