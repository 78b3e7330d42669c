package index

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/mnemodb/mnemo/simd"
)

// searcher is the per-search scratch of an HNSW: the visited set as a
// bitset (16 times smaller than hnswlib's array of 16-bit stamps, so that
// it stays in the first-level cache at 100,000 nodes and in the second at
// millions, where the random reads of a search would otherwise miss it),
// the two heaps, the prepared query and the buffers of neighbour selection.
// Searchers live in a sync.Pool, so a search allocates nothing once the pool
// is warm.
type searcher struct {
	visited []uint64 // a bit per node id
	touched []uint32 // the words of visited that the current search set
	cand    minHeap  // candidates to expand, nearest on top
	res     minHeap  // results, negated distances: farthest on top
	q       []float32
	sorted  []item      // results in ascending order
	sel     []item      // neighbour selection output
	nbrs    []item      // the neighbours chosen for a node being linked
	prune   []item      // neighbour selection input when pruning a full list
	drop    []item      // old neighbours a pruning leaves out
	kept    []item      // the nodes a pruned list anchors
	batch   []uint32    // unvisited neighbours of the node being expanded
	repair  []uint32    // Compact: the candidates of a list being repaired
	rows    [][]float32 // their vectors, scored in one kernel call
	dists   []float32   // their distances to the query
	crows   [][]uint8   // under SQ8: their code rows
	idots   []int32     // under SQ8: their integer inner products
	q8      []int8      // under SQ8: the query about the center, the steps folded in, quantized
	qscale  float32     // under SQ8: the step of q8
	qlo     float32     // under SQ8: (q-center).(lo-center), see prepareCodes
	qnorm2  float32     // under SQ8: |q-center|^2
	spill   []item      // under SQ8: results the walk displaced last, re-ranked too
	spilled int         // displacements so far, the next slot of spill is spilled%k
}

func (h *HNSW) getSearcher() *searcher {
	s, _ := h.pool.Get().(*searcher)
	if s == nil {
		s = &searcher{}
	}
	return s
}

func (h *HNSW) putSearcher(s *searcher) { h.pool.Put(s) }

// reset empties the visited set and makes it cover ids below n. A search
// that touched few of its words clears just those; one that touched many
// clears it all, which is then no slower.
func (s *searcher) reset(n uint32) {
	words := (int(n) + 63) / 64 // in int: n+63 can overflow a uint32
	if len(s.touched) < len(s.visited)/16 {
		for _, w := range s.touched {
			s.visited[w] = 0
		}
	} else {
		clear(s.visited)
	}
	s.touched = s.touched[:0]
	if words > len(s.visited) {
		s.visited = make([]uint64, words+words/4)
	}
	s.cand = s.cand[:0]
	s.res = s.res[:0]
}

// visit marks id and reports whether it was unvisited. Nodes added after the
// search started may lie beyond the set, which then grows.
func (s *searcher) visit(id uint32) bool {
	w := id / 64
	if int(w) >= len(s.visited) {
		s.grow(w)
	}
	word := s.visited[w]
	bit := uint64(1) << (id % 64)
	if word&bit != 0 {
		return false
	}
	if word == 0 {
		s.touched = append(s.touched, w)
	}
	s.visited[w] = word | bit
	return true
}

// gather marks the ids of list (a neighbour list, read atomically) visited
// and appends those that were not to batch (s.batch or a prefix of it),
// which it returns and keeps in s.batch. It does in arithmetic what visit
// does with branches: whether a neighbour was visited before is a
// coin toss that the branch predictor loses about half the time, and
// replacing the branches made searches measurably faster, float32 and SQ8
// alike (figures in docs/performance-notes.md).
func (s *searcher) gather(batch, list []uint32) []uint32 {
	m := len(batch)
	if cap(batch)-m < len(list) {
		batch = append(make([]uint32, 0, 2*cap(batch)+len(list)), batch...)
	}
	if cap(s.touched)-len(s.touched) < len(list) {
		s.touched = append(make([]uint32, 0, 2*cap(s.touched)+len(list)), s.touched...)
	}
	batch = batch[:m+len(list)]
	touched := s.touched[:len(s.touched)+len(list)]
	t := len(s.touched)
	for j := range list {
		nb := atomic.LoadUint32(&list[j])
		w := nb / 64
		if int(w) >= len(s.visited) {
			s.grow(w)
		}
		old := s.visited[w]
		s.visited[w] = old | 1<<(nb%64)
		batch[m] = nb
		m += int(^old >> (nb % 64) & 1)
		touched[t] = w
		t += int(b2u(old == 0))
	}
	s.touched = touched[:t]
	s.batch = batch[:m]
	return s.batch
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// grow makes the visited set cover word w.
func (s *searcher) grow(w uint32) {
	grown := make([]uint64, int(w)+int(w)/4+1)
	copy(grown, s.visited)
	s.visited = grown
}

// walk selects which nodes a layer search may return.
type walk struct {
	filter      func(uint64) bool // admit keys (nil: all)
	skipDeleted bool              // queries skip tombstones; construction links to them
	exclude     uint32            // a node never returned (the one being inserted)
	paired      bool              // expand candidates two at a time (see searchLayer)
	spill       int               // keep this many of the results displaced last in s.spill
}

// spillRerank enables the re-ranking of displaced results (see Search);
// tests turn it off to compare.
var spillRerank = true

// keepSpilled saves the result about to be displaced, the farthest, in
// the ring of the n displaced last.
func (s *searcher) keepSpilled(n int) {
	if len(s.spill) < n {
		s.spill = append(s.spill, s.res[0])
	} else {
		s.spill[s.spilled%n] = s.res[0]
	}
	s.spilled++
}

func (w *walk) filtering() bool { return w.filter != nil || w.skipDeleted }

func (h *HNSW) admits(w *walk, id uint32) bool {
	if id == w.exclude {
		return false
	}
	// Construction walks admit tombstones but not the nodes a Compact is
	// about to release (flagRetired) or has released.
	if f := h.flags(id); f != 0 && (w.skipDeleted || f&(flagFree|flagRetired) != 0) {
		return false
	}
	return w.filter == nil || w.filter(h.key(id))
}

// greedy walks layer from cur to a local minimum of the distance to q,
// scoring each node's neighbours in one kernel call: on the code rows when
// codes is set (an SQ8 search, prepared by prepareCodes, curD a code
// distance too), else on the float32 vectors.
func (h *HNSW) greedy(s *searcher, q []float32, cur uint32, curD float32, layer int, codes bool) (uint32, float32) {
	for changed := true; changed; {
		changed = false
		list := h.links(cur, layer)
		n := atomic.LoadUint32(&list[0])
		batch := s.batch[:0]
		for j := uint32(1); j <= n; j++ {
			batch = append(batch, atomic.LoadUint32(&list[j]))
		}
		s.batch = batch
		for i, d := range h.scoreBatch(s, q, batch, codes) {
			if d < curD {
				cur, curD, changed = batch[i], d, true
			}
		}
	}
	return cur, curD
}

// scoreBatch returns, in s.dists, the distances from the query to the
// nodes of batch, scored in one kernel call: on their code rows when codes
// is set (an SQ8 search, prepared by prepareCodes), all of whose loads
// start before the first is scored, else on their float32 vectors with q.
func (h *HNSW) scoreBatch(s *searcher, q []float32, batch []uint32, codes bool) []float32 {
	if codes {
		crows := s.crows[:0]
		for _, nb := range batch {
			crows = append(crows, h.codes(nb))
		}
		s.crows = crows
		simd.PrefetchRows(crows)
		return h.scoreCodes(s, batch, crows)
	}
	rows := s.rows[:0]
	for _, nb := range batch {
		rows = append(rows, h.vec(nb))
	}
	s.rows = rows
	return h.score(s, q, rows)
}

// score returns the distances from the prepared query q to rows, in
// s.dists, computed by one row-kernel call.
func (h *HNSW) score(s *searcher, q []float32, rows [][]float32) []float32 {
	if cap(s.dists) < len(rows) {
		s.dists = make([]float32, max(len(rows), 2*h.m0))
	}
	dists := s.dists[:len(rows)]
	if scoreEachRow {
		for i, r := range rows {
			dists[i] = pairDistance(h.metric, q, r)
		}
		return dists
	}
	scoreRows(dists, h.metric, q, rows)
	return dists
}

// scoreEachRow makes searches score one row per single-pair kernel call
// (vek's on the accelerated path), the loop the row kernels replaced. Only
// BenchmarkSearchKernels sets it, to measure what the row kernels gain in
// the graph walk; distances then differ from the row kernels' in the last
// bits.
var scoreEachRow = false

// pairDistance is distance through the single-pair kernels.
func pairDistance(metric Metric, q, v []float32) float32 {
	switch metric {
	case L2:
		return simd.L2Squared(q, v)
	case Dot:
		return -simd.Dot(q, v)
	}
	return 1 - simd.Dot(q, v)
}

// searchLayer is the beam search of the paper (Algorithm 2) with hnswlib's
// stopping rule: expand the nearest candidate until it is farther than the
// farthest of ef results. When nodes can be rejected (a filter, or
// tombstones) the search also goes on until it holds ef admitted results,
// so a selective filter widens the beam rather than cutting the answer
// short. A second seed (extra, unless noNode) starts the search from two
// places. The admitted results are left in s.res.
//
// A paired walk (w.paired) takes the two nearest candidates at once when
// both pass the stopping rule, and scores the unvisited neighbours of both
// in one kernel call. On a graph far larger than the cache a single
// expansion is a chain of two memory waits, the neighbour list and then the
// neighbours' rows, that leaves most of the CPU's outstanding-miss slots
// idle; pairing overlaps two chains. The second candidate is the one a
// plain walk would usually expand next, the more often the larger ef, and
// when it is not, the extra expansion widens the beam, so recall at a
// given ef rises a little; on a graph that fits in cache the extra work is
// not repaid (see pairedMin, and docs/performance-notes.md for the
// figures).
//
// With codes set (an SQ8 index, prepared by prepareCodes) every distance of
// the walk, the seeds' included, is the approximate one of the code rows;
// epD must be one too.
func (h *HNSW) searchLayer(s *searcher, q []float32, ep uint32, epD float32, ef, layer int, w *walk, extra uint32, codes bool) {
	s.reset(h.nodes.Load())
	h.seedLayer(s, w, ep, epD)
	if extra != noNode && extra != ep {
		var d float32
		if codes {
			d = h.codeDistance(s, extra)
		} else {
			d = distance(h.metric, q, h.vec(extra))
		}
		h.seedLayer(s, w, extra, d)
	}
	lower := float32(math.Inf(1))
	if len(s.res) > 0 {
		lower = -s.res.top().dist
	}
	filtering := w.filtering()
	// With no filter, no released slot, no Compact under way and (for a
	// query) no tombstone in the index, every node but the excluded one is
	// admitted, and the flags word (a cache line of its own, away from the
	// vector just scored) need not be read.
	cheap := w.filter == nil && h.nfree.Load() == 0 && !h.retiring.Load() && (!w.skipDeleted || h.deleted.Load() == 0)
	for s.cand.Len() > 0 {
		c := s.cand.top()
		if c.dist > lower && (len(s.res) >= ef || !filtering) {
			break
		}
		s.cand.pop()
		// Gather the unvisited neighbours and start loading their vectors,
		// then score them all in one kernel call: on a graph larger than
		// the cache the loads overlap, and on a small one no neighbour pays
		// a call's fixed cost.
		list := h.links(c.id, layer)
		n := atomic.LoadUint32(&list[0])
		batch := s.gather(s.batch[:0], list[1:n+1])
		if w.paired && s.cand.Len() > 0 {
			if c := s.cand.top(); c.dist <= lower || len(s.res) < ef && filtering {
				s.cand.pop()
				list := h.links(c.id, layer)
				n := atomic.LoadUint32(&list[0])
				batch = s.gather(batch, list[1:n+1])
			}
		}
		for i, d := range h.scoreBatch(s, q, batch, codes) {
			if len(s.res) < ef || d < lower {
				nb := batch[i]
				s.cand.push(item{d, nb})
				if cheap && nb != w.exclude || !cheap && h.admits(w, nb) {
					if len(s.res) < ef {
						s.res.push(item{-d, nb})
					} else {
						if w.spill > 0 {
							s.keepSpilled(w.spill)
						}
						s.res.replaceTop(item{-d, nb})
					}
				}
				if len(s.res) > 0 {
					lower = -s.res.top().dist
				}
			}
		}
		// The next node to expand is the nearest candidate: start loading
		// its neighbour list (hnswlib does the same), and in a paired walk
		// that of the second nearest, the smaller child of the top.
		if n := s.cand.Len(); n > 0 {
			h.prefetchLinks(s.cand.top().id, layer)
			if w.paired && n > 1 {
				second := 1
				if n > 2 && s.cand[2].dist < s.cand[1].dist {
					second = 2
				}
				h.prefetchLinks(s.cand[second].id, layer)
			}
		}
	}
}

// pairedMin is the number of nodes in the graph (see inGraph) from which a
// query's layer-0 walk is paired (see searchLayer); an index keeps it in
// HNSW.pairedMin, which tests lower. Measured against plain walks on the
// same graphs (docs/performance-notes.md), pairing paid on graphs well past
// the cache (100,000 and 1,000,000 nodes of 128-d) and not on small ones
// (10,000 to 20,000 nodes), where it also raised recall least; 40,000
// nodes of 128-d was about where it broke even. Sizes between 40,000 and
// 100,000 nodes were not measured.
const pairedMin = 1 << 16

// inGraph returns the number of nodes in the graph: the slots handed out
// less those Compact released (tombstones are still walked through).
func (h *HNSW) inGraph() uint32 {
	return h.nodes.Load() - uint32(h.nfree.Load())
}

// seedLayer starts a layer search at node id, at distance d from the query.
func (h *HNSW) seedLayer(s *searcher, w *walk, id uint32, d float32) {
	s.visit(id)
	if h.admits(w, id) {
		s.res.push(item{-d, id})
	}
	s.cand.push(item{d, id})
}

// sortedResults empties s.res into s.sorted, nearest first.
func (s *searcher) sortedResults() []item {
	n := len(s.res)
	if cap(s.sorted) < n {
		s.sorted = make([]item, n)
	}
	s.sorted = s.sorted[:n]
	for i := n - 1; i >= 0; i-- {
		it := s.res.pop()
		s.sorted[i] = item{-it.dist, it.id}
	}
	return s.sorted
}

// Search appends to dst[:0] the k nearest live keys to q, nearest first.
// It descends the upper layers greedily and runs a beam search of width
// max(ef, k) on layer 0; see SearchOptions for filters and exact scans.
// It allocates nothing when dst has room for k results and the searcher
// pool is warm.
func (h *HNSW) Search(dst []Result, q []float32, k int, opts *SearchOptions) ([]Result, error) {
	dst = dst[:0]
	if err := CheckVector(q, h.dim, h.metric); err != nil {
		return dst, err
	}
	var o SearchOptions
	if opts != nil {
		o = *opts
	}
	if o.Ef < 0 {
		return dst, fmt.Errorf("%w: ef is %d", ErrInvalidOptions, o.Ef)
	}
	if k <= 0 {
		return dst, nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.getSearcher()
	defer h.putSearcher(s)
	s.q = prepare(s.q, q, h.metric)
	if o.Keys != nil {
		return h.scanKeys(s, dst, k, o.Keys, o.Filter), nil
	}
	if o.Exact {
		return h.scanAll(s, dst, k, o.Filter), nil
	}
	ep := h.ep.Load()
	if ep == emptyEP {
		return dst, nil
	}
	cur, top := unpackEP(ep)
	codes := h.quant == SQ8 && h.prepareCodes(s)
	var curD float32
	if codes {
		curD = h.codeDistance(s, cur)
	} else {
		curD = distance(h.metric, s.q, h.vec(cur))
	}
	for l := top; l > 0; l-- {
		cur, curD = h.greedy(s, s.q, cur, curD, l, codes)
	}
	ef := o.Ef
	if ef == 0 {
		ef = h.efS
	}
	// The layer-0 search starts both where the descent ended and at the
	// entry point. Every node is reachable from the entry point (see
	// link.go), so a search whose ef covers the index, or whose filter
	// admits fewer than ef nodes, sees every admitted node: results are
	// then exact, and never fewer than min(k, admitted). Otherwise the
	// extra seed costs one distance.
	root, _ := unpackEP(ep)
	w := walk{filter: o.Filter, skipDeleted: true, exclude: noNode, paired: h.inGraph() >= h.pairedMin}
	if codes {
		// With ef below 2k, the ef results of the walk on codes are
		// little more than the k returned, so re-ranking them can only
		// reorder what the codes chose. The k results the walk displaced
		// last are re-ranked too (they cost k more float32 rows, and
		// nothing in the walk): at ef 10 that brought SQ8's recall up to
		// float32's for a few percent of queries/s. From ef 2k up it
		// left recall as it was and still cost queries/s, so it is not
		// done there (figures in docs/performance-notes.md).
		s.spill, s.spilled = s.spill[:0], 0
		if max(ef, k) < 2*k && spillRerank {
			w.spill = k
		}
	}
	h.searchLayer(s, s.q, cur, curD, max(ef, k), 0, &w, root, codes)
	if codes {
		h.rerank(s, k)
	}
	for len(s.res) > k {
		s.res.pop()
	}
	for _, it := range s.sortedResults() {
		dst = append(dst, Result{Key: h.key(it.id), Distance: it.dist})
	}
	sortResults(dst)
	return dst, nil
}

// scanKeys is the exact plan: the distance from s.q to every listed live
// key, each counted once. The key map is read under its lock; the filter,
// a caller's function, runs after the lock is released.
func (h *HNSW) scanKeys(s *searcher, dst []Result, k int, keys []uint64, filter func(uint64) bool) []Result {
	s.reset(h.nodes.Load())
	ids := s.sel[:0]
	h.keys.RLock()
	for _, key := range keys {
		if id, ok := h.keys.m[key]; ok && s.visit(id) {
			ids = append(ids, item{id: id})
		}
	}
	h.keys.RUnlock()
	s.sel = ids
	for _, it := range ids {
		if filter != nil && !filter(h.key(it.id)) {
			continue
		}
		d := distance(h.metric, s.q, h.vec(it.id))
		s.res.offer(k, d, it.id)
	}
	for _, it := range s.sortedResults() {
		dst = append(dst, Result{Key: h.key(it.id), Distance: it.dist})
	}
	sortResults(dst)
	return dst
}

// scanAll is the exact plan over the whole index: the distance from s.q to
// every live node, a chunk's worth of rows per row-kernel call.
func (h *HNSW) scanAll(s *searcher, dst []Result, k int, filter func(uint64) bool) []Result {
	s.res = s.res[:0]
	n := h.nodes.Load()
	for lo := uint32(0); lo < n; lo += 1 << h.chunkShift {
		hi := min(n, lo+1<<h.chunkShift)
		ids, rows := s.batch[:0], s.rows[:0]
		for id := lo; id < hi; id++ {
			if h.flags(id) != 0 || filter != nil && !filter(h.key(id)) {
				continue
			}
			ids, rows = append(ids, id), append(rows, h.vec(id))
		}
		s.batch, s.rows = ids, rows
		for i, d := range h.score(s, s.q, rows) {
			s.res.offer(k, d, ids[i])
		}
	}
	for _, it := range s.sortedResults() {
		dst = append(dst, Result{Key: h.key(it.id), Distance: it.dist})
	}
	sortResults(dst)
	return dst
}
