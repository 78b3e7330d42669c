package bm25

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo"
)

var defaultParams = mnemo.BM25{K1: mnemo.DefaultBM25K1, B: mnemo.DefaultBM25B}

// reference scores the documents of model exactly as BM25 defines it, from
// scratch: every document that holds a query term and that admit accepts,
// best first, ties by key (all of them, not just k).
func reference(model map[uint64]Doc, query []string, p mnemo.BM25, admit func(uint64) bool) []Result {
	n, total, df := 0, 0.0, map[string]int{}
	for _, d := range model {
		if len(d.Terms) > 0 {
			n++
			total += float64(d.Length)
		}
		for _, tf := range d.Terms {
			df[tf.Term]++
		}
	}
	qtf := map[string]int{}
	for _, w := range query {
		qtf[w]++
	}
	avg := total / float64(n)
	var out []Result
	for key, d := range model {
		s, matched := 0.0, false
		for _, tf := range d.Terms {
			q := qtf[tf.Term]
			if q == 0 {
				continue
			}
			idf := math.Log(1 + (float64(n)-float64(df[tf.Term])+0.5)/(float64(df[tf.Term])+0.5))
			f := float64(tf.TF)
			s += float64(q) * idf * f * (p.K1 + 1) / (f + p.K1*(1-p.B+p.B*float64(d.Length)/avg))
			matched = true
		}
		if matched && (admit == nil || admit(key)) {
			out = append(out, Result{key, s})
		}
	}
	slices.SortFunc(out, func(a, b Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

func close(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(y)) }

// sameTop checks that got is a top k of all (a full ranking): ordered best
// first with exact ties by key, the same scores as all's first k (to
// rounding: sums in another order), and each key in all with its score,
// so that only records whose scores tie to rounding trade places.
func sameTop(got, all []Result, k int) error {
	want := all[:min(k, len(all))]
	if len(got) != len(want) {
		return fmt.Errorf("%d results, want %d", len(got), len(want))
	}
	at := map[uint64]float64{}
	for _, r := range all {
		at[r.Key] = r.Score
	}
	seen := map[uint64]bool{}
	for i, r := range got {
		if i > 0 && !better(got[i-1], r) {
			return fmt.Errorf("results %d and %d out of order: %+v, %+v", i-1, i, got[i-1], r)
		}
		if !close(r.Score, want[i].Score) {
			return fmt.Errorf("result %d scores %v, want %v", i, r.Score, want[i].Score)
		}
		s, ok := at[r.Key]
		if !ok || !close(r.Score, s) || seen[r.Key] {
			return fmt.Errorf("result %d is key %d (%v), want key %d (%v)", i, r.Key, r.Score, want[i].Key, want[i].Score)
		}
		seen[r.Key] = true
	}
	return nil
}

// randomQuery draws 1 to 6 terms, repeats and unknown terms included.
func randomQuery(r *rand.Rand) []string {
	q := make([]string, 1+r.IntN(6))
	for i := range q {
		if r.IntN(10) == 0 {
			q[i] = "unknown"
		} else {
			q[i] = vocab[r.IntN(len(vocab))]
		}
	}
	return q
}

// randomParams draws BM25 parameters over their whole range, the edges
// included.
func randomParams(r *rand.Rand) mnemo.BM25 {
	pick := func(hi float64) float64 {
		switch r.IntN(6) {
		case 0:
			return 0
		case 1:
			return hi
		}
		return r.Float64() * hi
	}
	return mnemo.BM25{K1: pick(3), B: pick(1)}
}

// TestSearchMatchesReference: on random collections (adds, overwrites,
// removes) Search returns the top k of a from-scratch BM25 over the live
// documents, for random queries, k, parameters and filters; and the top k
// found with MaxScore pruning is the top of the exhaustive ranking
// (k above the number of documents, where nothing is pruned).
func TestSearchMatchesReference(t *testing.T) {
	r := newRand(t)
	for round := range 30 {
		idx, model := New(), map[uint64]Doc{}
		keys := []int{3, 40, 400, 2000}[round%4]
		randomOps(t, r, idx, model, 2*keys+r.IntN(2*keys), keys)
		for range 40 {
			q, p := randomQuery(r), randomParams(r)
			var admit func(uint64) bool
			if m := uint64(r.IntN(4)); m > 1 {
				admit = func(key uint64) bool { return key%m != 0 }
			}
			all := reference(model, q, p, admit)
			k := 1 + r.IntN(len(model)+2)
			if r.IntN(2) == 0 {
				k = 1 + r.IntN(10)
			}
			got := idx.Search(q, k, p, admit)
			if err := sameTop(got, all, k); err != nil {
				t.Fatalf("round %d, query %q, k %d, %+v, filter %v: %v", round, q, k, p, admit != nil, err)
			}
			exhaustive := idx.Search(q, len(model)+1, p, admit)
			if err := sameTop(exhaustive, all, len(all)); err != nil {
				t.Fatalf("round %d, query %q, exhaustive, %+v: %v", round, q, p, err)
			}
			if err := sameTop(got, exhaustive, k); err != nil {
				t.Fatalf("round %d, query %q, k %d, %+v: pruned top k against the exhaustive ranking: %v", round, q, k, p, err)
			}
		}
	}
}

// TestSearchEdges: what matches nothing returns nothing.
func TestSearchEdges(t *testing.T) {
	idx := New()
	if got := idx.Search([]string{"alpha"}, 5, defaultParams, nil); got != nil {
		t.Fatalf("empty index: %+v", got)
	}
	idx.Add(0, docOf("alpha beta"))
	idx.Add(1, docOf("beta"))
	idx.Add(2, docOf("gamma"))
	idx.Remove(2)
	cases := []struct {
		name  string
		query []string
		k     int
		admit func(uint64) bool
	}{
		{"k 0", []string{"alpha"}, 0, nil},
		{"k -1", []string{"alpha"}, -1, nil},
		{"no terms", nil, 5, nil},
		{"unknown term", []string{"delta"}, 5, nil},
		{"term of removed documents only", []string{"gamma"}, 5, nil},
		{"filter admits none", []string{"beta"}, 5, func(uint64) bool { return false }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := idx.Search(c.query, c.k, defaultParams, c.admit); len(got) != 0 {
				t.Fatalf("%+v", got)
			}
		})
	}
	got := idx.Search([]string{"beta", "alpha"}, 1, defaultParams, nil)
	if len(got) != 1 || got[0].Key != 0 {
		t.Fatalf("beta alpha: %+v", got)
	}
}

// TestSearchTies: equal scores come back by key, within the top k and at
// its boundary.
func TestSearchTies(t *testing.T) {
	idx := New()
	for _, key := range []uint64{7, 3, 9, 1, 5} {
		idx.Add(key, docOf("zebra stripes"))
	}
	idx.Add(2, docOf("horse stripes"))
	got := idx.Search([]string{"zebra"}, 3, defaultParams, nil)
	if len(got) != 3 || got[0].Key != 1 || got[1].Key != 3 || got[2].Key != 5 || got[0].Score != got[2].Score {
		t.Fatalf("%+v, want keys 1, 3, 5 with one score", got)
	}
}

// TestSearchConcurrent: searches share the index and the pooled scratch
// safely (run it under -race), and each gets its own answer.
func TestSearchConcurrent(t *testing.T) {
	r := newRand(t)
	idx, model := New(), map[uint64]Doc{}
	randomOps(t, r, idx, model, 3000, 1000)
	queries := make([][]string, 50)
	want := make([][]Result, len(queries))
	for i := range queries {
		queries[i] = randomQuery(r)
		want[i] = idx.Search(queries[i], 10, defaultParams, nil)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range queries {
				i := (i + g*13) % len(queries)
				if got := idx.Search(queries[i], 10, defaultParams, nil); !slices.Equal(got, want[i]) {
					t.Errorf("query %q: %+v, alone %+v", queries[i], got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// TestSearchKeysMatchesReference: on random collections SearchKeys over a
// superset of the admitted keys (with duplicates, absent and removed
// keys) returns the top k of the reference BM25 restricted to the
// filter, as Search does.
func TestSearchKeysMatchesReference(t *testing.T) {
	r := newRand(t)
	for round := range 30 {
		idx, model := New(), map[uint64]Doc{}
		keys := []int{3, 40, 400, 2000}[round%4]
		randomOps(t, r, idx, model, 2*keys+r.IntN(2*keys), keys)
		for range 40 {
			q, p := randomQuery(r), randomParams(r)
			m := uint64(2 + r.IntN(5))
			admit := func(key uint64) bool { return key%m == 1 }
			var cand []uint64
			for key := range uint64(keys + 5) { // absent keys too
				if admit(key) || r.IntN(4) == 0 {
					cand = append(cand, key)
					if r.IntN(5) == 0 {
						cand = append(cand, key) // a duplicate
					}
				}
			}
			r.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
			all := reference(model, q, p, admit)
			k := 1 + r.IntN(12)
			got := idx.SearchKeys(q, k, p, cand, admit)
			if err := sameTop(got, all, k); err != nil {
				t.Fatalf("round %d, query %q, k %d, %+v: %v", round, q, k, p, err)
			}
			if err := sameTop(got, idx.Search(q, k, p, admit), k); err != nil {
				t.Fatalf("round %d, query %q, k %d: SearchKeys against Search: %v", round, q, k, err)
			}
		}
	}
	if got := New().SearchKeys([]string{"a"}, 3, mnemo.BM25{K1: 1.2, B: 0.75}, []uint64{1}, nil); got != nil {
		t.Fatalf("an empty index: %v", got)
	}
}

// TestSearchPathsAgree: on skewed text (a few terms in most documents,
// so that MaxScore cuts the long lists), a record's score is the same
// bits whichever way Search computed it, by walking the lists or by
// looking the terms left up in the record's own after the cut: the
// pruned top k is exactly the head of the exhaustive ranking (k above the
// number of documents, where nothing is cut), as are SearchKeys' over
// every key. SearchTies returns that head and every result tied with its
// k-th, and SearchKeysTies the same.
func TestSearchPathsAgree(t *testing.T) {
	r := newRand(t)
	for round := range 10 {
		idx, n := New(), 2000+r.IntN(2000)
		z := rand.NewZipf(r, 1.1, 2, 3000)
		words := func(lo, hi int) []string {
			w := make([]string, lo+r.IntN(hi-lo+1))
			for i := range w {
				w[i] = fmt.Sprintf("w%d", z.Uint64())
			}
			return w
		}
		keys := make([]uint64, n)
		for key := range n {
			idx.Add(uint64(key), docOf(strings.Join(words(6, 30), " ")))
			keys[key] = uint64(key)
		}
		for range 50 {
			q, p, k := words(2, 8), randomParams(r), 1+r.IntN(40)
			all := idx.Search(q, n+1, p, nil)
			want := all[:min(k, len(all))]
			tied := len(want)
			for tied < len(all) && all[tied].Score == want[k-1].Score {
				tied++
			}
			check := func(name string, got, want []Result) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Fatalf("round %d, query %q, k %d, %+v: %s\ngot  %v\nwant %v", round, q, k, p, name, got, want)
				}
			}
			check("Search", idx.Search(q, k, p, nil), want)
			check("SearchKeys", idx.SearchKeys(q, k, p, keys, nil), want)
			check("SearchTies", idx.SearchTies(q, k, p, nil), all[:tied])
			check("SearchKeysTies", idx.SearchKeysTies(q, k, p, keys, nil), all[:tied])
		}
	}
}
