package index

import (
	"errors"
	"fmt"
)

// Check verifies the structural invariants of the graph and returns every
// violation found, joined, or nil:
//
//   - every link points to an allocated, unreleased node (live or
//     tombstoned) whose level covers the layer, never to itself, and no
//     list holds a node twice or more links than its layer allows;
//   - the entry point is set exactly when some node is, and sits on the top
//     level of the graph;
//   - the key map and the node keys agree, and Len counts the live nodes;
//   - every anchor links to the node it anchors (every node but the entry
//     point has an anchor, a node whose layer-0 list must keep a link to
//     it);
//   - every live node is reachable from the entry point on layer 0;
//   - no node is retired (see Compact) unless a Compact is under way.
//
// Check may run while a Compact does, between its slices: the nodes it
// has retired are tombstones to Check, and every invariant holds then too.
// Check holds the index exclusively while it runs; it costs O(n * M). Tests
// run it after every mutation they make.
func (h *HNSW) Check() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	n := h.nodes.Load()
	live, topLevel := 0, -1
	retiring := h.retiring.Load()
	for id := uint32(0); id < n; id++ {
		f := h.flags(id)
		if f&flagRetired != 0 && (!retiring || f&flagDeleted == 0 || f&flagFree != 0) {
			bad("node %d has flags %#x: retired, but not a tombstone of a running Compact", id, f)
		}
		if f&flagFree != 0 {
			continue
		}
		if f&flagDeleted == 0 {
			live++
			if got, ok := h.keys.m[h.key(id)]; !ok || got != id {
				bad("node %d (key %d) is live but the key map says %d, %v", id, h.key(id), got, ok)
			}
		}
		topLevel = max(topLevel, h.level(id))
		for l := 0; l <= h.level(id); l++ {
			list := h.links(id, l)
			cnt := list[0]
			if int(cnt) > h.maxLinks(l) {
				bad("node %d layer %d has %d links, max %d", id, l, cnt, h.maxLinks(l))
				continue
			}
			seen := make(map[uint32]bool, cnt)
			for j := uint32(1); j <= cnt; j++ {
				nb := list[j]
				switch {
				case nb >= n:
					bad("node %d layer %d links to %d, beyond %d nodes", id, l, nb, n)
					continue
				case nb == id:
					bad("node %d layer %d links to itself", id, l)
				case h.flags(nb)&flagFree != 0:
					bad("node %d layer %d links to released slot %d", id, l, nb)
				case h.level(nb) < l:
					bad("node %d layer %d links to %d whose level is %d", id, l, nb, h.level(nb))
				case seen[nb]:
					bad("node %d layer %d links to %d twice", id, l, nb)
				}
				seen[nb] = true
			}
		}
	}
	for id := uint32(0); id < n; id++ {
		a := *h.anchor(id)
		if h.flags(id)&flagFree != 0 || a == noNode {
			continue
		}
		if a >= n || h.flags(a)&flagFree != 0 || !h.linksTo(a, id) {
			bad("node %d is anchored by %d, which does not link to it", id, a)
		}
	}
	if live != len(h.keys.m) {
		bad("%d live nodes but %d keys", live, len(h.keys.m))
	}
	for key, id := range h.keys.m {
		if id >= n || h.flags(id) != 0 || h.key(id) != key {
			bad("key %d maps to node %d which is not its live node", key, id)
		}
	}
	ep := h.ep.Load()
	switch {
	case ep == emptyEP && topLevel >= 0:
		bad("no entry point but nodes exist")
	case ep != emptyEP && topLevel < 0:
		bad("entry point set on an empty graph")
	case ep != emptyEP:
		id, l := unpackEP(ep)
		if id >= n || h.flags(id)&flagFree != 0 {
			bad("entry point %d is not an allocated node", id)
			break
		}
		if l != h.level(id) || l != topLevel {
			bad("entry point %d at level %d (node level %d), top level is %d", id, l, h.level(id), topLevel)
		}
		reached := h.reachable(id)
		for v := uint32(0); v < n; v++ {
			if h.flags(v) == 0 && !reached[v] {
				bad("live node %d is unreachable from the entry point on layer 0", v)
			}
		}
	}
	return errors.Join(errs...)
}
