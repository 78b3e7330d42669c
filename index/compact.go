package index

import (
	"runtime"
	"slices"
	"sync/atomic"
)

// Compact repairs the graph around tombstoned nodes and releases their slots
// for reuse by Add. Every node that links to a tombstone gets a new
// neighbour list, chosen by the heuristic from its live neighbours and the
// live neighbours of the tombstones it linked to (hnswlib's repair; a
// search from the node adds to them when they are fewer than a list
// holds), and each new neighbour of a live node is offered a link back; a
// new entry point is chosen if the old one was deleted; and every node
// anchored by a tombstone gets another anchor first (a node on layer 0
// whose list must keep a link to it), so that
// each live node keeps a path from the entry point on layer 0 throughout.
// Each list that linked to a tombstone costs about (2M)^2 distances to
// score its candidates and the heuristic's among the nearest
// 2*efConstruction of them; in all, well under half the CPU time of the
// repair this one replaced, a search of width efConstruction from every
// such node (figures in docs/performance-notes.md).
//
// Deletion is therefore two-phase: Delete is O(1) and immediate (the key is
// never returned again), and Compact, which the caller runs when convenient
// (the engine runs it before writing a checkpoint), does the repair.
//
// Compact runs beside searches, Adds and Deletes. It holds the index
// exclusively twice, briefly: first for one read of every node's flags,
// which marks the tombstones it will release (retires them, so that no
// insert links to them again) and, if the entry point is among them,
// moves it, with no distance computed; and at the end, to wait for the
// searches that began before the repair (they may still stand on a
// retired node) and release the first slots. Everything else runs under
// the shared lock, at most repairSlice nodes (scanSlice in the cheap
// passes) per hold, each list rewritten under its node's writer lock as
// an insert does; so a search never waits for the repair, and a caller
// that takes the index exclusively (WriteTo, Check) waits for one slice
// at most and finds a whole graph, retired nodes being tombstones to it. Under SQ8, Compact then trains the code ranges again
// under the exclusive lock, O(n * dim), as WriteTo does. Nodes deleted
// while Compact runs stay tombstones until the next one; concurrent calls
// run one after the other. It returns the number of slots released.
func (h *HNSW) Compact() int {
	if h.deleted.Load() == 0 {
		return 0
	}
	h.compactMu.Lock()
	defer h.compactMu.Unlock()
	c, released := h.retire()
	if c != nil {
		s := h.getSearcher()
		h.readoptAll(c)
		h.repairAll(s, c)
		h.putSearcher(s)
		released = h.release(c)
	}
	if h.quant == SQ8 && released > 0 {
		h.mu.Lock()
		h.train() // the released nodes' values may have set a range
		h.mu.Unlock()
	}
	return released
}

// Slices of a Compact: the most nodes it repairs, and visits in its other
// passes, per hold of the shared lock.
const (
	repairSlice = 32
	scanSlice   = 1024
)

// compactHook, when set by a test, runs after each slice of a Compact with
// no lock held: step names the pass ("anchor", "repair", "release") and
// slice counts its slices so far.
var compactHook func(step string, slice int)

// sliced runs f over [0, n) in slices of per, each under the shared lock.
func (h *HNSW) sliced(step string, n, per int, f func(lo, hi int)) {
	for i, lo := 1, 0; lo < n; i, lo = i+1, lo+per {
		h.mu.RLock()
		f(lo, min(lo+per, n))
		h.mu.RUnlock()
		if compactHook != nil {
			compactHook(step, i)
		}
	}
}

// compaction is the state of one Compact.
type compaction struct {
	n       uint32   // nodes when the tombstones were retired
	keep    []uint64 // a bit per id below n: the node stays (live then, or un-retired)
	retired []uint32 // the retired nodes, un-retired ones included
}

func (c *compaction) keeps(id uint32) bool { return id < c.n && c.keep[id/64]&(1<<(id%64)) != 0 }

func (c *compaction) markKept(id uint32) { c.keep[id/64] |= 1 << (id % 64) }

// retire marks every tombstone retired (flagRetired) under the exclusive
// lock, so that no insert that begins later links to one (admits, rescue),
// and notes the live nodes, which stay. When the entry point is retired,
// the highest live node takes its place (moveEntry). When no live node is
// left, retire releases every tombstone at once and returns a nil
// compaction and their number; with no tombstone it returns nil and 0.
func (h *HNSW) retire() (*compaction, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.nodes.Load()
	c := &compaction{n: n, keep: make([]uint64, (n+63)/64)}
	top, topLevel := uint32(noNode), -1
	for id := uint32(0); id < n; id++ {
		switch f := h.flags(id); {
		case f&flagFree != 0:
		case f&flagDeleted != 0:
			atomic.StoreUint32(h.flagWord(id), f|flagRetired)
			c.retired = append(c.retired, id)
		default:
			c.markKept(id)
			if l := h.level(id); l > topLevel {
				top, topLevel = id, l
			}
		}
	}
	switch {
	case len(c.retired) == 0:
		return nil, 0
	case top == noNode:
		for _, t := range c.retired {
			h.free(t)
		}
		h.deleted.Add(-int64(len(c.retired)))
		h.ep.Store(emptyEP)
		return nil, len(c.retired)
	}
	h.retiring.Store(true)
	if root, _ := unpackEP(h.ep.Load()); h.flags(root)&flagRetired != 0 {
		h.moveEntry(c, root, top, topLevel)
	}
	return c, 0
}

// moveEntry makes top, the highest live node, the entry point in place of
// root, a retired node: top takes an anchored link to root, from which
// every node is reachable, as a promoted node does (link.go), and the
// retired nodes above top's level are lowered to it, so that the entry
// point is on the top level of the graph (a snapshot taken before they are
// released must have it there). Every node above that level is retired, so
// their lists up there link only to one another, and nothing else links to
// them there. If every slot of top anchors a node, one of those nodes is
// given another anchor first (spareSlot); if none can be, root is not
// released but stays a tombstone, the entry point, until a later Compact.
// The caller holds h.mu exclusively.
func (h *HNSW) moveEntry(c *compaction, root, top uint32, topLevel int) {
	for !h.anchorLink(top, root, true) {
		if !h.spareSlot(c, top) {
			atomic.StoreUint32(h.flagWord(root), flagDeleted)
			c.markKept(root)
			return
		}
	}
	for _, t := range c.retired {
		if ch, off := h.loc(t); int(ch.levels[off]) > topLevel {
			ch.levels[off] = uint8(topLevel)
		}
	}
	h.ep.Store(packEP(top, topLevel))
}

// spareSlot gives one of the nodes that u anchors another anchor, so that
// u has a slot to spare, and reports whether it could. The caller holds
// h.mu exclusively, so the locks adoptStaying tries are free.
func (h *HNSW) spareSlot(c *compaction, u uint32) bool {
	list := h.links(u, 0)
	n := atomic.LoadUint32(&list[0])
	for j := uint32(1); j <= n; j++ {
		if e := atomic.LoadUint32(&list[j]); atomic.LoadUint32(h.anchor(e)) == u && h.adoptStaying(c, e, u, true) {
			return true
		}
	}
	return false
}

// readoptAll gives each node that stays and is anchored by a retired node
// another anchor (readopt). Anchors then lead from every node that stays
// to the entry point through nodes that stay only, and keep doing so: a
// node only ever takes an anchor that is not retired. So the retired nodes
// can be unlinked without cutting any live node off.
func (h *HNSW) readoptAll(c *compaction) {
	h.sliced("anchor", int(c.n), scanSlice, func(lo, hi int) {
		for v := uint32(lo); v < uint32(hi); v++ {
			if c.keeps(v) {
				h.readopt(c, v)
			}
		}
	})
}

// readopt moves the anchor of v, a node that stays, off a retired node (or
// gives v one if it has none and is not the entry point; the entry point's
// anchor is only cleared). If no node can take v over (adoptStaying, whose
// writer locks are only tried, a few times), its anchor is not released:
// un-retired, it stays a tombstone until a later Compact, and is itself
// given an anchor in turn.
func (h *HNSW) readopt(c *compaction, v uint32) {
	for try := 0; ; try++ {
		a := atomic.LoadUint32(h.anchor(v))
		root, _ := unpackEP(h.ep.Load())
		switch {
		case a != noNode && h.flags(a)&flagRetired == 0:
			return
		case v == root:
			if a != noNode {
				atomic.CompareAndSwapUint32(h.anchor(v), a, noNode)
			}
			return
		case h.adoptStaying(c, v, noNode, try >= 2):
			return
		case try == 3:
			if a != noNode {
				atomic.StoreUint32(h.flagWord(a), flagDeleted)
				c.markKept(a)
				h.readopt(c, a)
			}
			return
		}
		runtime.Gosched()
	}
}

// adoptStaying anchors v to a node that stays, other than not: a neighbour
// of v that links to it already, else one that takes a link to it
// (anchorLink), else the entry point, else, if wide, any node that stays.
// The new anchor's anchors must lead to the entry point without passing
// through v (anchoredAvoiding). As in adoptAnchor, adoptMu and the entry
// point's lock keep other moves of anchors out meanwhile, and writer locks
// are only tried. It reports whether v has a new anchor.
func (h *HNSW) adoptStaying(c *compaction, v, not uint32, wide bool) bool {
	h.adoptMu.Lock()
	defer h.adoptMu.Unlock()
	if !h.epMu.TryLock() {
		return false
	}
	defer h.epMu.Unlock()
	try := func(w uint32, link bool) bool {
		if w == v || w == not || h.flags(w)&(flagRetired|flagFree) != 0 {
			return false
		}
		mu := h.lock(w)
		if !mu.TryLock() {
			return false
		}
		defer mu.Unlock()
		switch {
		case !h.anchoredAvoiding(w, v):
			return false
		case h.linksTo(w, v):
			atomic.StoreUint32(h.anchor(v), w)
			return true
		}
		return link && h.anchorLinkLocked(w, v, true)
	}
	list := h.links(v, 0)
	n := atomic.LoadUint32(&list[0])
	for _, link := range [2]bool{false, true} {
		for j := uint32(1); j <= n; j++ {
			if try(atomic.LoadUint32(&list[j]), link) {
				return true
			}
		}
	}
	if root, _ := unpackEP(h.ep.Load()); try(root, true) {
		return true
	}
	for w := uint32(0); wide && w < c.n; w++ {
		if c.keeps(w) && try(w, true) {
			return true
		}
	}
	return false
}

// repairAll repairs every list of every node that stays (repair). Nodes
// added since the tombstones were retired never linked to one.
func (h *HNSW) repairAll(s *searcher, c *compaction) {
	h.sliced("repair", int(c.n), repairSlice, func(lo, hi int) {
		for x := uint32(lo); x < uint32(hi); x++ {
			if !c.keeps(x) {
				continue
			}
			for l := 0; l <= h.level(x); l++ {
				h.repair(s, x, l)
			}
		}
	})
}

// repair rewrites x's list on layer if it links to a retired node. The
// candidates are x's live neighbours and the live neighbours of all its
// neighbours, retired or not (hnswlib's repair), plus, when those are
// fewer than the list holds, what a search from x finds (it routes
// through the retired nodes, which keep their links until release); they
// are scored before x's writer lock is taken. Under the lock the list is
// read again (an insert may have changed it), retired nodes that x
// anchors lose their anchor (readoptAll left them nothing that stays to
// lead to), the heuristic chooses among the candidates (selectLazy), the
// nodes that x anchors are kept (restoreAnchored), and the list is
// rewritten. Each new neighbour of a live x is then offered a link back,
// as on insert: without them, nodes whose way in ran through tombstones
// are left with few incoming links and searches rarely reach them.
//
// Choosing among the nearest efConstruction candidates only, as hnswlib
// does, cost recall on clustered data (TestDeleteAndCompact), where twice
// as many or all of them did not, and this repair then beat both a fresh
// build of the rest and the repair it replaced (a search of width
// efConstruction from every node, plus the neighbours of the tombstones).
// On random data recall after the repair was what it was before, above a
// fresh build's; the old repair, whose searches amount to a second pass
// of construction over every node, raised it further, at several times
// the cost. The figures are in docs/performance-notes.md.
func (h *HNSW) repair(s *searcher, x uint32, layer int) {
	list := h.links(x, layer)
	if !h.linksRetired(list) {
		return
	}
	maxL := h.maxLinks(layer)
	q := h.vec(x)
	ids := h.repairCandidates(s, x, layer, list)
	if len(ids) < maxL {
		w := walk{exclude: x, skipDeleted: true}
		h.searchLayer(s, q, x, 0, h.efC, layer, &w, noNode, false)
		found := s.sortedResults()
		s.reset(h.nodes.Load())
		s.visit(x)
		for _, id := range ids {
			s.visit(id)
		}
		for _, it := range found {
			if s.visit(it.id) {
				ids = append(ids, it.id)
			}
		}
		s.repair = ids
	}
	rows := s.rows[:0]
	for _, id := range ids {
		rows = append(rows, h.vec(id))
	}
	s.rows = rows
	cands := s.prune[:0]
	for i, d := range h.score(s, q, rows) {
		cands = append(cands, item{d, ids[i]})
	}

	mu := h.lock(x)
	mu.Lock()
	n := atomic.LoadUint32(&list[0])
	old, kept := s.drop[:0], s.kept[:0]
	for j := uint32(1); j <= n; j++ {
		e := atomic.LoadUint32(&list[j])
		old = append(old, item{id: e})
		anchors := layer == 0 && atomic.LoadUint32(h.anchor(e)) == x
		f := h.flags(e)
		switch {
		case f&flagRetired != 0:
			if anchors {
				atomic.CompareAndSwapUint32(h.anchor(e), x, noNode)
			}
			continue
		case anchors:
			kept = append(kept, item{h.distID(x, e), e})
		}
		if f == 0 && s.visit(e) {
			cands = append(cands, item{h.distID(x, e), e})
		}
	}
	sel := h.selectLazy(s.sel[:0], cands, maxL)
	if layer == 0 {
		sel = h.restoreAnchored(x, sel, kept, maxL)
	}
	s.prune, s.sel, s.kept, s.drop = cands, sel, kept, old
	for j, it := range sel {
		atomic.StoreUint32(&list[j+1], it.id)
	}
	atomic.StoreUint32(&list[0], uint32(len(sel)))
	mu.Unlock()

	if h.flags(x) != 0 {
		return // deleted meanwhile: a tombstone takes no new links
	}
	back := append(s.nbrs[:0], sel...)
	s.nbrs = back
	for _, it := range back {
		if !slices.ContainsFunc(old, func(o item) bool { return o.id == it.id }) {
			h.addLink(s, it.id, x, it.dist, layer)
		}
	}
}

// selectLazy is selectNeighbors for cands in any order, which it reorders,
// looking at the nearest 2*efConstruction of them at most. The heuristic
// takes candidates nearest first and stops once it holds m, so they are
// ordered through a heap as it goes rather than all sorted first: a repair
// has hundreds of candidates, of which the heuristic looks at most, and
// with M large, thousands (docs/performance-notes.md). Looking at the
// nearest efConstruction only cost recall on clustered data (see repair);
// twice that did not.
func (h *HNSW) selectLazy(dst, cands []item, m int) []item {
	if len(cands) <= m {
		return append(dst, cands...)
	}
	heap := minHeap(cands[:0])
	for _, c := range cands {
		heap.push(c)
	}
	base := len(dst)
	for seen := 0; len(heap) > 0 && len(dst)-base < m && seen < 2*h.efC; seen++ {
		if c := heap.pop(); h.diverse(c, dst[base:]) {
			dst = append(dst, c)
		}
	}
	return dst
}

// linksRetired reports whether list (read atomically) holds a retired node.
// Once it holds none it never will again: nothing links to a retired node
// anew.
func (h *HNSW) linksRetired(list []uint32) bool {
	n := atomic.LoadUint32(&list[0])
	for j := uint32(1); j <= n; j++ {
		if h.flags(atomic.LoadUint32(&list[j]))&flagRetired != 0 {
			return true
		}
	}
	return false
}

// repairCandidates returns in s.repair the live nodes among x's neighbours
// on layer (list) and among their neighbours there, each once, and leaves
// them and x marked visited.
func (h *HNSW) repairCandidates(s *searcher, x uint32, layer int, list []uint32) []uint32 {
	s.reset(h.nodes.Load())
	s.visit(x)
	ids := s.repair[:0]
	n := atomic.LoadUint32(&list[0])
	for j := uint32(1); j <= n; j++ {
		e := atomic.LoadUint32(&list[j])
		if h.flags(e) == 0 && s.visit(e) {
			ids = append(ids, e)
		}
		if h.level(e) < layer {
			continue
		}
		el := h.links(e, layer)
		en := atomic.LoadUint32(&el[0])
		for i := uint32(1); i <= en; i++ {
			if nb := atomic.LoadUint32(&el[i]); h.flags(nb) == 0 && s.visit(nb) {
				ids = append(ids, nb)
			}
		}
	}
	s.repair = ids
	return ids
}

// release frees the slots of the retired nodes that are still retired. By
// now no node that stays links to one and none is the entry point, so a
// search that begins now never reaches one. Their anchors are cleared
// first, all of them, and then their lists, so that between slices the
// graph is whole (no anchor without its link, no link to a released
// slot). Then the exclusive lock is taken, which waits for the searches
// that began before the repair and may still stand on a retired node, and
// the slots are released, the first slice under it and the rest under the
// shared lock. It returns how many.
func (h *HNSW) release(c *compaction) int {
	n := len(c.retired)
	retired := func(t uint32) bool { return h.flags(t)&flagRetired != 0 }
	h.sliced("release", n, scanSlice, func(lo, hi int) {
		for _, t := range c.retired[lo:hi] {
			if retired(t) {
				atomic.StoreUint32(h.anchor(t), noNode)
			}
		}
	})
	h.sliced("release", n, scanSlice, func(lo, hi int) {
		for _, t := range c.retired[lo:hi] {
			for l := 0; retired(t) && l <= h.level(t); l++ {
				atomic.StoreUint32(&h.links(t, l)[0], 0)
			}
		}
	})
	released := 0
	free := func(lo, hi int) {
		for _, t := range c.retired[lo:hi] {
			if retired(t) {
				h.free(t)
				released++
			}
		}
	}
	h.mu.Lock()
	free(0, min(n, scanSlice))
	h.mu.Unlock()
	if n > scanSlice {
		h.sliced("release", n-scanSlice, scanSlice, func(lo, hi int) { free(scanSlice+lo, scanSlice+hi) })
	}
	h.deleted.Add(-int64(released))
	h.retiring.Store(false)
	return released
}

// free releases the slot of t, a tombstone that nothing links to and no
// search can reach, for reuse by Add.
func (h *HNSW) free(t uint32) {
	ch, off := h.loc(t)
	atomic.StoreUint32(h.flagWord(t), flagFree)
	atomic.StoreUint32(&h.links(t, 0)[0], 0)
	atomic.StoreUint32(&ch.anchor[off], noNode)
	h.setUpper(ch, off, 0)
	ch.levels[off] = 0
	h.alloc.Lock()
	h.alloc.free = append(h.alloc.free, t)
	h.alloc.Unlock()
	h.nfree.Add(1)
}

// reanchor reassigns every anchor from a breadth-first walk of layer 0 from
// the entry point (a node's anchor is the node the walk first reached it
// from), then links back in every live node the walk did not reach: the
// nearest reached node that can spare a slot takes an anchored link to it,
// and the walk resumes from there. ReadHNSW runs it on the graph it has
// read, which it owns outright.
func (h *HNSW) reanchor(s *searcher) {
	n := h.nodes.Load()
	for id := uint32(0); id < n; id++ {
		*h.anchor(id) = noNode
	}
	ep := h.ep.Load()
	if ep == emptyEP {
		return
	}
	root, top := unpackEP(ep)
	reached := make([]bool, n)
	h.walkFrom(root, reached)
	for id := uint32(0); id < n; id++ {
		if reached[id] || h.flags(id) != 0 {
			continue
		}
		q := h.vec(id)
		cur, curD := root, h.distID(id, root)
		for l := top; l > 0; l-- {
			cur, curD = h.greedy(s, q, cur, curD, l, false)
		}
		w := walk{exclude: id, skipDeleted: true}
		h.searchLayer(s, q, cur, curD, h.efC, 0, &w, noNode, false)
		linked := false
		for _, c := range s.sortedResults() {
			// The descent may enter layer 0 away from the reached part.
			if reached[c.id] {
				if linked = h.anchorLink(c.id, id, true); linked {
					break
				}
			}
		}
		for u := uint32(0); u < n && !linked; u++ {
			// Every slot of every candidate anchors a node; some reached
			// node has a free or unanchored slot (anchors number fewer
			// than nodes, slots 2M per node).
			if reached[u] && h.flags(u)&flagFree == 0 {
				linked = h.anchorLink(u, id, true)
			}
		}
		h.walkFrom(id, reached)
	}
}

// walkFrom marks in reached every node reachable on layer 0 from start that
// was not marked yet, anchoring each to the node it was first reached from.
func (h *HNSW) walkFrom(start uint32, reached []bool) {
	reached[start] = true
	queue := []uint32{start}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		list := h.links(id, 0)
		for j := uint32(1); j <= list[0]; j++ {
			if nb := list[j]; !reached[nb] {
				reached[nb] = true
				*h.anchor(nb) = id
				queue = append(queue, nb)
			}
		}
	}
}

// reachable returns which nodes have a layer-0 path from root.
func (h *HNSW) reachable(root uint32) []bool {
	reached := make([]bool, h.nodes.Load())
	reached[root] = true
	stack := []uint32{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		list := h.links(id, 0)
		for j := uint32(1); j <= list[0]; j++ {
			if nb := list[j]; !reached[nb] {
				reached[nb] = true
				stack = append(stack, nb)
			}
		}
	}
	return reached
}
