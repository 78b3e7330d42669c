package bm25

import (
	"math"
	"slices"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/analysis"
)

// Result is a scored document.
type Result struct {
	Key   uint64
	Score float64
}

// idf is BM25's inverse document frequency in its non-negative form
// (Lucene's): ln(1 + (N - df + 0.5) / (df + 0.5)).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Search scores every document holding a term of query (analyzed terms,
// repeats counted) by BM25 with parameters p and returns the k best that
// admit accepts (nil: all), best first, ties by key. The result is a new
// slice the caller owns; query is not kept. Search may run concurrently
// with other Searches, not with Add or Remove.
//
// Terms are scored rarest first, a whole posting list at a time, into a
// dense accumulator. A term's contribution to any record is below its
// bound idf*qtf*(k1+1); once the k-th best score so far exceeds the sum of
// the bounds of the terms left (MaxScore), no record those terms alone
// hold can reach the top k, so their long lists are not walked: the
// records already scored that could still make it look their remaining
// terms up in their own term lists. The result is exact.
func (t *Index) Search(query []string, k int, p mnemo.BM25, admit func(uint64) bool) []Result {
	if k <= 0 || t.n == 0 || len(query) == 0 {
		return nil
	}
	qs := t.queryTerms(query, p)
	if len(qs) == 0 {
		return nil
	}
	rest := make([]float64, len(qs)+1) // rest[i]: the bounds of terms i.. summed
	postings := make([]int, len(qs)+1) // and their list lengths
	for i := len(qs) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + qs[i].weight
		postings[i] = postings[i+1] + len(t.terms[qs[i].id].list)
	}
	acc := t.accumulator()
	defer t.scratch.Put(acc)
	avg := float64(t.total) / float64(t.n)
	k1a, k1b := p.K1*(1-p.B), p.K1*p.B/avg
	norm := func(key uint64) float64 { return k1a + k1b*float64(t.lengths[key]) }
	theta, best := 0.0, 0.0
	cut := len(qs) // terms cut.. are looked up, not walked
	for i, q := range qs {
		// The k-th best is at most the best, which must beat the bounds
		// left; finding it costs a pass over the records scored so far,
		// which pays when the lists left are longer.
		if best > rest[i] && len(acc.touched) >= k && 2*len(acc.touched) < postings[i] {
			theta = kthScore(acc, k, admit)
			if theta > rest[i] {
				cut = i
				break
			}
		}
		tp := &t.terms[q.id]
		gens, lengths, score, w := t.gens, t.lengths, acc.score, q.weight
		fresh := tp.live == len(tp.list) // no stale posting: skip the check
		for _, x := range tp.list {
			if !fresh && gens[x.key] != x.gen {
				continue
			}
			tf := float64(x.tf)
			v := w * tf / (tf + k1a + k1b*float64(lengths[x.key]))
			old := score[x.key]
			if old == 0 {
				acc.touched = append(acc.touched, x.key)
			}
			score[x.key] = old + v
			best = max(best, old+v)
		}
	}
	if cut < len(qs) {
		theta = kthScore(acc, k, admit) // raised by the last list walked
		left := qs[cut:]
		for _, key := range acc.touched {
			if acc.score[key]+rest[cut] < theta {
				continue // cannot reach the top k
			}
			n := norm(key)
			for _, dt := range t.docs[key] {
				for _, q := range left {
					if q.id == dt.id {
						tf := float64(dt.tf)
						acc.score[key] += q.weight * tf / (tf + n)
					}
				}
			}
		}
	}
	h := make(resultHeap, 0, min(k, len(acc.touched))+1)
	for _, key := range acc.touched {
		s := acc.score[key]
		acc.score[key] = 0
		if len(h) == k && !better(Result{key, s}, h[0]) {
			continue
		}
		if admit != nil && !admit(key) {
			continue
		}
		h.push(Result{key, s}, k)
	}
	acc.touched = acc.touched[:0]
	return h.sorted()
}

// qterm is a query term found in the index.
type qterm struct {
	id     uint32
	qtf    float64
	weight float64 // idf * qtf * (k1+1): also the term's bound
	df     int
}

// queryTerms returns the terms of query the index holds, rarest first:
// the order Search adds their contributions in.
func (t *Index) queryTerms(query []string, p mnemo.BM25) []qterm {
	var qs []qterm
	for _, tc := range analysis.Count(query) {
		if id, ok := t.dict[tc.Term]; ok && t.terms[id].live > 0 {
			df := t.terms[id].live
			q := float64(tc.Count)
			qs = append(qs, qterm{id, q, idf(t.n, df) * q * (p.K1 + 1), df})
		}
	}
	slices.SortStableFunc(qs, func(a, b qterm) int { return a.df - b.df })
	return qs
}

// SearchKeys is Search over the documents of keys only (a superset of
// what admit accepts; duplicates and keys without text are ignored), for
// a filter that admits few records: it scores each key's own terms
// instead of walking the query terms' lists, O(len(keys) * terms per
// document), and returns the results Search would (the idf is the whole
// index's; a score may differ in its last bit where Search's MaxScore
// cut adds terms in another order).
func (t *Index) SearchKeys(query []string, k int, p mnemo.BM25, keys []uint64, admit func(uint64) bool) []Result {
	if k <= 0 || t.n == 0 || len(query) == 0 || len(keys) == 0 {
		return nil
	}
	qs := t.queryTerms(query, p)
	if len(qs) == 0 {
		return nil
	}
	avg := float64(t.total) / float64(t.n)
	k1a, k1b := p.K1*(1-p.B), p.K1*p.B/avg
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	h := make(resultHeap, 0, min(k, len(keys))+1)
	tfs := make([]float64, len(qs))
	for _, key := range keys {
		if key >= uint64(len(t.gens)) || t.gens[key] == 0 || admit != nil && !admit(key) {
			continue
		}
		found := false
		clear(tfs)
		for _, dt := range t.docs[key] {
			for i, q := range qs {
				if q.id == dt.id {
					tfs[i], found = float64(dt.tf), true
				}
			}
		}
		if !found {
			continue
		}
		s := 0.0
		for i, q := range qs { // in Search's order, so the sums are equal
			if tf := tfs[i]; tf > 0 {
				s += q.weight * tf / (tf + k1a + k1b*float64(t.lengths[key]))
			}
		}
		if len(h) < k || better(Result{key, s}, h[0]) {
			h.push(Result{key, s}, k)
		}
	}
	return h.sorted()
}

// sorted returns the heap's results, best first.
func (h resultHeap) sorted() []Result {
	out := []Result(h)
	slices.SortFunc(out, func(a, b Result) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// kthScore returns the k-th best score among the records scored so far
// that admit accepts, or 0 when fewer than k are.
func kthScore(acc *accumulator, k int, admit func(uint64) bool) float64 {
	h := acc.heap[:0]
	for _, key := range acc.touched {
		s := acc.score[key]
		if len(h) == k && s <= h[0].Score {
			continue
		}
		if admit != nil && !admit(key) {
			continue
		}
		h.push(Result{key, s}, k)
	}
	acc.heap = h
	if len(h) < k {
		return 0
	}
	return h[0].Score
}

// accumulator is a Search's scratch, pooled: a dense score per key (all
// zero between searches), the keys scored, and a heap for kthScore.
type accumulator struct {
	score   []float64
	touched []uint64
	heap    resultHeap
}

func (t *Index) accumulator() *accumulator {
	acc, _ := t.scratch.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	if len(acc.score) < len(t.gens) {
		acc.score = make([]float64, len(t.gens))
	}
	return acc
}

// better orders results: higher score first, then lower key.
func better(a, b Result) bool {
	return a.Score > b.Score || a.Score == b.Score && a.Key < b.Key
}

// resultHeap is a min-heap (worst at the root) of at most k results.
type resultHeap []Result

func (h *resultHeap) push(r Result, k int) {
	if len(*h) < k {
		*h = append(*h, r)
		s := *h
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(s[p], s[i]) {
				break
			}
			s[p], s[i] = s[i], s[p]
			i = p
		}
		return
	}
	s := *h
	s[0] = r
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && better(s[m], s[l]) {
			m = l
		}
		if l+1 < len(s) && better(s[m], s[l+1]) {
			m = l + 1
		}
		if m == i {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}
