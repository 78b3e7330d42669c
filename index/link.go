package index

import (
	"math"
	"slices"
	"sync/atomic"
)

// Reachability. A graph that prunes links can strand nodes: if every link
// into a node (or into a small group of nodes) is pruned away, no search
// finds it again. hnswlib accepts that; we do not. Every node except the
// entry point has an anchor: one node whose layer-0 list must keep a link to
// it. Anchors are assigned so that every node is reachable from the entry
// point along anchor links:
//
//   - a new node is anchored by the first anchored node that takes a
//     reverse link to it, or, if none did (every reverse link was pruned,
//     or, under concurrent inserts, went to nodes not yet anchored), by an
//     anchored neighbour forced to take one;
//   - when a new node becomes the entry point, it takes an anchored link to
//     the old entry point, from which everything is reachable;
//   - pruning a list drops a node that the list's owner anchors only once
//     another node that already links to it has adopted it (adoptAnchor);
//     when none can, the node keeps its place and a neighbour the owner
//     does not anchor gives up its own;
//   - Compact, before it unlinks the tombstones it releases, gives every
//     node they anchor another anchor among the nodes that stay (a node
//     that links to it already, or one that takes a link to it), and
//     moves the entry point first if it is one of them (compact.go);
//   - loading a snapshot reassigns anchors from a breadth-first walk from
//     the entry point and links back in anything it did not reach.
//
// An anchor changes only under the lock of the node that becomes the anchor,
// after the link is in place, so a concurrent pruning sees either the old
// anchor (and keeps a link it could drop) or the new one.
//
// The restores cost recall: a list that keeps a node only because it
// anchors it has one link fewer of the heuristic's choosing. In a 100k x
// 128 build, keeping every anchored node in place took a neighbour's slot
// 28,287 times; with adoption it does 88 times (8,407 adoptions), and
// recall@10 at ef 10 to 160 matches that of a build that restores nothing
// (within 0.0003; 0.004 to 0.005 above keeping them, at ef 10 and 40).

// link connects a new node into the graph (the paper's Algorithm 1): a greedy
// descent to the node's top layer, then on every layer from there down a beam
// search of width efConstruction, neighbour selection by the heuristic, and
// reverse links into the chosen neighbours, each under that neighbour's lock.
func (h *HNSW) link(id uint32, level int) {
	ep := h.ep.Load()
	if ep == emptyEP {
		h.epMu.Lock()
		if h.ep.Load() == emptyEP {
			h.ep.Store(packEP(id, level))
			h.epMu.Unlock()
			return
		}
		h.epMu.Unlock()
		ep = h.ep.Load()
	}
	s := h.getSearcher()
	defer h.putSearcher(s)
	q := h.vec(id)
	cur, top := unpackEP(ep)
	curD := h.distID(id, cur)
	for l := top; l > level; l-- {
		cur, curD = h.greedy(s, q, cur, curD, l, false)
	}
	w := walk{exclude: id}
	var cands []item
	for l := min(level, top); l >= 0; l-- {
		h.searchLayer(s, q, cur, curD, h.efC, l, &w, noNode, false)
		cands = s.sortedResults()
		if len(cands) == 0 {
			continue
		}
		cur, curD = cands[0].id, cands[0].dist
		sel := h.selectNeighbors(s.nbrs[:0], cands, h.m)
		s.nbrs = sel
		for _, nb := range sel {
			// Through addLink, not a plain store: a concurrent insert that
			// reached id on an upper layer may already have linked itself
			// into id's list here, and that link must survive.
			h.addLink(s, id, nb.id, nb.dist, l)
		}
		for _, nb := range sel {
			h.addLink(s, nb.id, id, nb.dist, l)
		}
	}
	if atomic.LoadUint32(h.anchor(id)) == noNode {
		h.rescue(id, cands)
	}
	if level > top {
		h.promote(id, level)
	}
}

// promote makes id (whose level is above the entry point's) the entry
// point, after giving it an anchored link to the entry point it replaces.
func (h *HNSW) promote(id uint32, level int) {
	h.epMu.Lock()
	defer h.epMu.Unlock()
	old, oldLevel := unpackEP(h.ep.Load())
	// If every slot of id anchors a node (only conceivable with very many
	// concurrent inserts), id stays below the entry point rather than
	// become an entry point that cannot reach the graph.
	if level <= oldLevel || !h.anchorLink(id, old, true) {
		return
	}
	h.ep.Store(packEP(id, level))
}

// selectNeighbors appends to dst at most m of cands (sorted nearest first)
// chosen by the paper's heuristic (Algorithm 4, as hnswlib implements it): a
// candidate is kept only when it is nearer to the base than to every
// candidate kept before it, which spreads links across directions instead of
// spending them all inside one cluster. With no more than m candidates,
// every one is kept.
func (h *HNSW) selectNeighbors(dst, cands []item, m int) []item {
	if len(cands) <= m {
		return append(dst, cands...)
	}
	base := len(dst)
	for _, c := range cands {
		if len(dst)-base >= m {
			break
		}
		if h.diverse(c, dst[base:]) {
			dst = append(dst, c)
		}
	}
	return dst
}

// diverse reports whether candidate c is nearer to the base than to every
// node in kept: the heuristic's test for keeping it.
func (h *HNSW) diverse(c item, kept []item) bool {
	for _, r := range kept {
		if h.distID(c.id, r.id) < c.dist {
			return false
		}
	}
	return true
}

// addLink adds the link u -> v on layer (d is their distance). When u's list
// is full, the list and v are pruned back to capacity by the heuristic,
// keeping on layer 0 every node u anchors (see restoreAnchored). The first
// node on layer 0 to keep a link to v becomes v's anchor.
func (h *HNSW) addLink(s *searcher, u, v uint32, d float32, layer int) {
	mu := h.lock(u)
	mu.Lock()
	defer mu.Unlock()
	list := h.links(u, layer)
	if holds(list, v) {
		return
	}
	n := atomic.LoadUint32(&list[0])
	maxL := h.maxLinks(layer)
	if int(n) < maxL {
		atomic.StoreUint32(&list[n+1], v)
		atomic.StoreUint32(&list[0], n+1)
	} else {
		cands := append(s.prune[:0], item{d, v})
		kept := s.kept[:0]
		// Score u's current neighbours in one row-kernel call.
		ids, rows := s.batch[:0], s.rows[:0]
		for j := uint32(1); j <= n; j++ {
			e := atomic.LoadUint32(&list[j])
			ids, rows = append(ids, e), append(rows, h.vec(e))
		}
		s.batch, s.rows = ids, rows
		for i, dist := range h.score(s, h.vec(u), rows) {
			e := ids[i]
			it := item{dist, e}
			cands = append(cands, it)
			if layer == 0 && atomic.LoadUint32(h.anchor(e)) == u {
				kept = append(kept, it)
			}
		}
		slices.SortFunc(cands, byDist)
		sel := h.selectNeighbors(s.sel[:0], cands, maxL)
		sel = h.restoreAnchored(u, sel, kept, maxL)
		s.prune, s.sel, s.kept = cands, sel, kept
		for j, it := range sel {
			atomic.StoreUint32(&list[j+1], it.id)
		}
		atomic.StoreUint32(&list[0], uint32(len(sel)))
		if !slices.ContainsFunc(sel, func(it item) bool { return it.id == v }) {
			return
		}
	}
	if layer == 0 && h.anchored(u) {
		atomic.CompareAndSwapUint32(h.anchor(v), noNode, u)
	}
}

// anchored reports whether u may anchor another node: it is the entry
// point or has an anchor itself. A node that an insert's search reached is
// reachable then, but under concurrent inserts it may be one still being
// linked, with no anchor yet; two such nodes could each take a reverse
// link to the other and anchor each other, a cycle the entry point does
// not reach, and pruning could later strand both. Taking anchors only from
// anchored nodes keeps the anchors a tree rooted at the entry point.
func (h *HNSW) anchored(u uint32) bool {
	root, _ := unpackEP(h.ep.Load())
	return u == root || atomic.LoadUint32(h.anchor(u)) != noNode
}

// restoreAnchored puts back into sel (a selection of at most maxL, nearest
// first) every node of kept, the nodes u anchors, that the heuristic left
// out: into a free slot; else, if another node already links to it and
// can take over its anchor (adoptAnchor), it is let go; else in place of
// the farthest selected node that u does not anchor. The heuristic runs on
// its own first, as hnswlib's does, so a list holds the neighbours it
// would hold without anchors but for the rare anchored node no other node
// adopts.
func (h *HNSW) restoreAnchored(u uint32, sel, kept []item, maxL int) []item {
	for _, a := range kept {
		if slices.ContainsFunc(sel, func(it item) bool { return it.id == a.id }) {
			continue
		}
		if len(sel) < maxL {
			sel = append(sel, a)
			continue
		}
		if h.adoptAnchor(u, a.id) {
			continue
		}
		for i := len(sel) - 1; i >= 0; i-- {
			if atomic.LoadUint32(h.anchor(sel[i].id)) != u {
				sel[i] = a
				break
			}
		}
	}
	return sel
}

// maxAdoptDepth bounds the walk up the anchor tree that adoptAnchor makes to
// rule out a cycle; a deeper adopter is passed over.
const maxAdoptDepth = 256

// adoptAnchor moves the anchor of a, which u (whose lock the caller holds)
// anchors and is about to drop from its full list, to another live node
// that already links to a on layer 0, so that the drop costs no link. The
// adopter is looked for among a's own neighbours, which mostly link back.
// Its anchors must lead to the entry point without passing through a, or
// the anchors would form a cycle the entry point does not reach. Its lock is
// only tried (the caller holds u's, and waiting could deadlock), and the
// anchor changes under it after the link is seen, as link.go requires.
// adoptMu serialises adoptions, so two of them cannot each pass that
// check and together close a cycle; the entry point's lock, also
// only tried, keeps promote from re-rooting the tree meanwhile.
func (h *HNSW) adoptAnchor(u, a uint32) bool {
	h.adoptMu.Lock()
	defer h.adoptMu.Unlock()
	if !h.epMu.TryLock() {
		return false
	}
	defer h.epMu.Unlock()
	held := h.lock(u)
	list := h.links(a, 0)
	n := atomic.LoadUint32(&list[0])
	for j := uint32(1); j <= n; j++ {
		w := atomic.LoadUint32(&list[j])
		if w == u || h.flags(w) != 0 {
			continue
		}
		mu := h.lock(w)
		if mu != held && !mu.TryLock() {
			continue
		}
		ok := h.linksTo(w, a) && h.anchoredAvoiding(w, a)
		if ok {
			atomic.StoreUint32(h.anchor(a), w)
		}
		if mu != held {
			mu.Unlock()
		}
		if ok {
			return true
		}
	}
	return false
}

// linksTo reports whether w's layer-0 list holds v.
func (h *HNSW) linksTo(w, v uint32) bool { return holds(h.links(w, 0), v) }

// holds reports whether list (a count, then the links; read atomically)
// holds v.
func holds(list []uint32, v uint32) bool {
	n := atomic.LoadUint32(&list[0])
	for j := uint32(1); j <= n; j++ {
		if atomic.LoadUint32(&list[j]) == v {
			return true
		}
	}
	return false
}

// anchoredAvoiding reports whether w's anchors lead to the entry point
// within maxAdoptDepth steps without passing through a: then w may anchor
// a without closing a cycle. A node not anchored yet (one still being
// linked by another insert) does not lead there.
func (h *HNSW) anchoredAvoiding(w, a uint32) bool {
	root, _ := unpackEP(h.ep.Load())
	for range maxAdoptDepth {
		switch {
		case w == a || w == noNode:
			return false
		case w == root:
			return true
		}
		w = atomic.LoadUint32(h.anchor(w))
	}
	return false
}

// rescue anchors a new node whose every reverse link was pruned away: the
// nearest node that can spare a slot takes an anchored link to it, trying
// first the layer-0 candidates of its insertion (nearest first) and then
// every anchored node that is not a released slot or about to be one
// (retired by a running Compact), tombstones included (Compact re-anchors
// what they anchor). A slot another Add has allocated and not yet
// initialised is never taken: it is not anchored (chunks start with every
// anchor noNode, and Compact clears released slots' anchors), and
// initSlot would clear the link. Under the dot metric a few large
// vectors are everyone's nearest neighbour and can fill their lists with
// nodes they anchor, hence the wide net. Anchors are fewer than nodes
// (tombstones counted) and slots are 2M per node, so some node always has
// room; leaving tombstones out broke that in small graphs with many of
// them (a FuzzOps input, kept in testdata).
func (h *HNSW) rescue(id uint32, cands []item) {
	for _, c := range cands {
		if h.anchored(c.id) && h.anchorLink(c.id, id, false) {
			return
		}
	}
	for u := uint32(0); u < h.nodes.Load(); u++ {
		if u != id && h.flags(u)&(flagFree|flagRetired) == 0 && h.anchored(u) && h.anchorLink(u, id, false) {
			return
		}
	}
}

// anchorLink puts the layer-0 link u -> v in place, replacing u's farthest
// neighbour that u does not anchor when the list is full, and makes u the
// anchor of v: always when force is set, else only if v has none. It
// reports false, changing nothing, when every slot of u holds a node that u
// anchors.
func (h *HNSW) anchorLink(u, v uint32, force bool) bool {
	mu := h.lock(u)
	mu.Lock()
	defer mu.Unlock()
	return h.anchorLinkLocked(u, v, force)
}

// anchorLinkLocked is anchorLink for a caller that holds u's writer lock.
func (h *HNSW) anchorLinkLocked(u, v uint32, force bool) bool {
	list := h.links(u, 0)
	n := atomic.LoadUint32(&list[0])
	switch {
	case h.linksTo(u, v):
	case int(n) < h.m0:
		atomic.StoreUint32(&list[n+1], v)
		atomic.StoreUint32(&list[0], n+1)
	default:
		far, farD := uint32(0), float32(math.Inf(-1))
		for j := uint32(1); j <= n; j++ {
			e := atomic.LoadUint32(&list[j])
			if d := h.distID(u, e); d > farD && atomic.LoadUint32(h.anchor(e)) != u {
				far, farD = j, d
			}
		}
		if far == 0 {
			return false
		}
		atomic.StoreUint32(&list[far], v)
	}
	if force {
		atomic.StoreUint32(h.anchor(v), u)
	} else {
		atomic.CompareAndSwapUint32(h.anchor(v), noNode, u)
	}
	return true
}

func byDist(a, b item) int {
	switch {
	case a.dist < b.dist:
		return -1
	case a.dist > b.dist:
		return 1
	}
	return 0
}
