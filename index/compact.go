package index

import (
	"slices"
	"sync/atomic"
)

// Compact repairs the graph around tombstoned nodes and releases their slots
// for reuse by Add. Every live node that links to a tombstone gets a new
// neighbour list, chosen by the heuristic from its live neighbours and the
// live neighbours of the tombstones it linked to (hnswlib's repair); a new
// entry point is chosen if the old one was deleted; and anchors are reassigned
// (see link.go), linking back in any live node left without a path from the
// entry point on layer 0.
//
// Deletion is therefore two-phase: Delete is O(1) and immediate (the key is
// never returned again), and Compact, which the caller runs when convenient
// (the engine runs it before writing a checkpoint), does the O(n * M) repair.
// Compact holds the index exclusively: searches and writes wait for it. It
// returns the number of slots released.
func (h *HNSW) Compact() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deleted.Load() == 0 {
		return 0
	}
	s := h.getSearcher()
	defer h.putSearcher(s)
	n := h.nodes.Load()
	for id := uint32(0); id < n; id++ {
		if h.flags(id) != 0 {
			continue
		}
		for l := 0; l <= h.level(id); l++ {
			h.relink(s, id, l)
		}
	}
	released := 0
	for id := uint32(0); id < n; id++ {
		if h.flags(id)&flagDeleted == 0 || h.flags(id)&flagFree != 0 {
			continue
		}
		ch, off := h.loc(id)
		atomic.StoreUint32(h.flagWord(id), flagFree)
		atomic.StoreUint32(&h.links(id, 0)[0], 0)
		h.setUpper(ch, off, 0)
		ch.levels[off] = 0
		h.alloc.free = append(h.alloc.free, id)
		h.nfree.Add(1)
		released++
	}
	h.deleted.Store(0)
	h.chooseEntry()
	h.reanchor(s)
	if h.quant == SQ8 {
		h.train() // the released nodes' values may have set a range
	}
	return released
}

// relink rebuilds the layer list of a live node if it links to a tombstone.
func (h *HNSW) relink(s *searcher, id uint32, layer int) {
	list := h.links(id, layer)
	n := list[0]
	dirty := false
	for j := uint32(1); j <= n && !dirty; j++ {
		dirty = h.flags(list[j])&flagDeleted != 0
	}
	if !dirty {
		return
	}
	// Candidates: what a search from the node itself finds (it routes
	// through the tombstones, which still hold their links), plus the live
	// neighbours it had and those of the tombstones it linked to.
	q := h.vec(id)
	w := walk{exclude: id, skipDeleted: true}
	h.searchLayer(s, q, id, 0, h.efC, layer, &w, noNode, false)
	cands := append(s.prune[:0], s.sortedResults()...)
	s.reset(h.nodes.Load())
	s.visit(id)
	for _, c := range cands {
		s.visit(c.id)
	}
	add := func(c uint32) {
		if h.flags(c) == 0 && s.visit(c) {
			cands = append(cands, item{h.distID(id, c), c})
		}
	}
	for j := uint32(1); j <= n; j++ {
		nb := list[j]
		if h.flags(nb)&flagDeleted == 0 {
			add(nb)
			continue
		}
		if h.level(nb) < layer {
			continue
		}
		dl := h.links(nb, layer)
		for i := uint32(1); i <= dl[0]; i++ {
			add(dl[i])
		}
	}
	slices.SortFunc(cands, byDist)
	sel := h.selectNeighbors(s.sel[:0], cands, h.maxLinks(layer))
	s.prune, s.sel = cands, sel
	old := append(s.drop[:0], item{})[:0]
	for j := uint32(1); j <= n; j++ {
		old = append(old, item{id: list[j]})
	}
	s.drop = old
	for j, it := range sel {
		list[j+1] = it.id
	}
	list[0] = uint32(len(sel))
	// Links are made in both directions, as on insert: each new neighbour
	// is offered a link back (pruned by the heuristic if its list is full).
	// Without them, nodes whose way in ran through tombstones are left with
	// few incoming links and searches rarely reach them.
	back := append(s.nbrs[:0], sel...)
	s.nbrs = back
	for _, it := range back {
		if !slices.ContainsFunc(old, func(o item) bool { return o.id == it.id }) {
			h.addLink(s, it.id, id, it.dist, layer)
		}
	}
}

// chooseEntry makes the highest live node the entry point if the current
// one is gone. The caller holds mu exclusively.
func (h *HNSW) chooseEntry() {
	if ep := h.ep.Load(); ep != emptyEP {
		if id, _ := unpackEP(ep); h.flags(id) == 0 {
			return
		}
	}
	best, bestLevel := uint32(noNode), -1
	for id := uint32(0); id < h.nodes.Load(); id++ {
		if h.flags(id) == 0 && h.level(id) > bestLevel {
			best, bestLevel = id, h.level(id)
		}
	}
	if best == noNode {
		h.ep.Store(emptyEP)
		return
	}
	h.ep.Store(packEP(best, bestLevel))
}

// reanchor reassigns every anchor from a breadth-first walk of layer 0 from
// the entry point (a node's anchor is the node the walk first reached it
// from), then links back in every live node the walk did not reach: the
// nearest reached node that can spare a slot takes an anchored link to it,
// and the walk resumes from there. The caller holds mu exclusively.
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
