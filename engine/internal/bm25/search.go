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
// hold can reach the top k, so their long lists need not be walked: the
// records already scored that could still make it look their remaining
// terms up in their own term lists instead. A lookup costs a few cache
// misses where a posting costs a few arithmetic operations, so the lists
// are cut only when the records to look up are fewer than the postings
// left divided by lookupCost. The result is exact, and a record's score
// is the same sum, term by term in the order above, whichever way it was
// computed.
func (t *Index) Search(query []string, k int, p mnemo.BM25, admit func(uint64) bool) []Result {
	return t.search(query, k, p, admit, false)
}

// SearchTies is Search that also returns, after the k best, every
// further result that scores the same as the k-th: a caller that orders
// equal scores by something other than the key finds its top k in one
// search.
func (t *Index) SearchTies(query []string, k int, p mnemo.BM25, admit func(uint64) bool) []Result {
	return t.search(query, k, p, admit, true)
}

// lookupCost is what looking a record's remaining terms up in its own
// term list costs, in postings walked: a lookup misses the cache on the
// record's term list, a posting is read in sequence. Measured with
// BenchmarkSearch (100,000 documents): 16, 64 and 256 looked up 391k,
// 112k and 26k records and walked 9.8M, 14.6M and 24.6M postings for its
// 500 queries, and 64 had the lowest p50; walking every list (no cut)
// had about twice its p50.
const lookupCost = 64

func (t *Index) search(query []string, k int, p mnemo.BM25, admit func(uint64) bool, ties bool) []Result {
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
	sc := t.scorer(p)
	theta, best := 0.0, 0.0
	cut := len(qs) // terms cut.. are looked up, not walked
	for i, q := range qs {
		// The k-th best is at most the best, which must beat the bounds
		// left; finding it costs a pass over the records scored so far,
		// which pays when the lists left are longer.
		if best > rest[i] && len(acc.touched) >= k && 2*len(acc.touched) < postings[i] {
			theta = kthScore(acc, k, admit)
			if theta > rest[i] && acc.fewAbove(theta-rest[i], postings[i]/lookupCost) {
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
			v := sc.term(w, float64(x.tf), lengths[x.key])
			old := score[x.key]
			if old == 0 {
				acc.touched = append(acc.touched, x.key)
			}
			score[x.key] = old + v
			if old+v > best { // not max: no NaN here, and a compare is cheaper
				best = old + v
			}
		}
	}
	if cut < len(qs) {
		theta = kthScore(acc, k, admit) // raised by the last list walked
		t.complete(acc, sc, qs[cut:], rest[cut], theta)
	}
	return acc.results(k, admit, ties)
}

// complete adds the contributions of the terms left (whose lists were not
// walked) to every record scored so far that could still reach theta with
// them, looking the terms up in the record's own term list, and adds them
// in left's order, as walking the lists would have.
func (t *Index) complete(acc *accumulator, sc scorer, left []qterm, bound, theta float64) {
	if cap(acc.tfs) < len(left) {
		acc.tfs = make([]float64, len(left))
	}
	tfs := acc.tfs[:len(left)]
	for _, key := range acc.touched {
		s := acc.score[key]
		if s+bound < theta {
			continue // cannot reach the top k
		}
		clear(tfs)
		for _, dt := range t.docs[key] {
			for j := range left {
				if left[j].id == dt.id {
					tfs[j] = float64(dt.tf)
					break
				}
			}
		}
		for j, q := range left {
			if tf := tfs[j]; tf > 0 {
				s += sc.term(q.weight, tf, t.lengths[key])
			}
		}
		acc.score[key] = s
	}
}

// scorer computes a term's BM25 contribution to a record under the
// parameters of a search and the index's average length.
type scorer struct{ k1a, k1b float64 }

func (t *Index) scorer(p mnemo.BM25) scorer {
	avg := float64(t.total) / float64(t.n)
	return scorer{p.K1 * (1 - p.B), p.K1 * p.B / avg}
}

// term is the contribution of a query term of weight w (see qterm) to a
// record of length terms holding it tf times. Every path computes it
// here, the one way, so that equal inputs give equal bits (the explicit
// conversion keeps the compiler from fusing the multiply-add).
func (s scorer) term(w, tf float64, length uint32) float64 {
	return w * tf / (tf + s.k1a + float64(s.k1b*float64(length)))
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
// document), and returns the results Search would, with the same scores
// (the idf is the whole index's).
func (t *Index) SearchKeys(query []string, k int, p mnemo.BM25, keys []uint64, admit func(uint64) bool) []Result {
	return t.searchKeys(query, k, p, keys, admit, false)
}

// SearchKeysTies is SearchKeys that also returns the results tied with
// the k-th, as SearchTies does.
func (t *Index) SearchKeysTies(query []string, k int, p mnemo.BM25, keys []uint64, admit func(uint64) bool) []Result {
	return t.searchKeys(query, k, p, keys, admit, true)
}

func (t *Index) searchKeys(query []string, k int, p mnemo.BM25, keys []uint64, admit func(uint64) bool, ties bool) []Result {
	if k <= 0 || t.n == 0 || len(query) == 0 || len(keys) == 0 {
		return nil
	}
	qs := t.queryTerms(query, p)
	if len(qs) == 0 {
		return nil
	}
	sc := t.scorer(p)
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var all []Result // with ties: every scored record
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
				s += sc.term(q.weight, tf, t.lengths[key])
			}
		}
		if ties {
			all = append(all, Result{key, s})
		}
		if len(h) < k || better(Result{key, s}, h[0]) {
			h.push(Result{key, s}, k)
		}
	}
	if !ties || len(h) < k {
		return h.sorted()
	}
	kth := h[0].Score
	all = slices.DeleteFunc(all, func(r Result) bool { return r.Score < kth })
	return resultHeap(all).sorted()
}

// results returns the scored records that admit accepts, the best k, or
// with ties the best k and those that tie with the k-th, best first, and
// leaves the accumulator zeroed for the next search.
func (acc *accumulator) results(k int, admit func(uint64) bool, ties bool) []Result {
	var out []Result
	if ties {
		// One pass: the heap finds the k-th best score, and out keeps
		// every result that reached the heap's least score when it was
		// read (which only rises, up to the k-th): a superset of those
		// at or above the k-th.
		h := acc.heap[:0]
		for _, key := range acc.touched {
			s := acc.score[key]
			acc.score[key] = 0
			if len(h) == k && s < h[0].Score || admit != nil && !admit(key) {
				continue
			}
			out = append(out, Result{key, s})
			if len(h) < k || better(Result{key, s}, h[0]) {
				h.push(Result{key, s}, k)
			}
		}
		acc.heap = h
		if len(h) == k {
			out = slices.DeleteFunc(out, func(r Result) bool { return r.Score < h[0].Score })
		}
		out = resultHeap(out).sorted()
	} else {
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
		out = h.sorted()
	}
	acc.touched = acc.touched[:0]
	return out
}

// fewAbove reports whether fewer than limit records scored so far have
// at least floor.
func (acc *accumulator) fewAbove(floor float64, limit int) bool {
	n := 0
	for _, key := range acc.touched {
		if acc.score[key] >= floor {
			if n++; n >= limit {
				return false
			}
		}
	}
	return true
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
// zero between searches), the keys scored, a heap for kthScore, and the
// term frequencies of a record being completed.
type accumulator struct {
	score   []float64
	touched []uint64
	heap    resultHeap
	tfs     []float64
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
