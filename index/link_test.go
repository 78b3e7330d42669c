package index

import (
	"slices"
	"sync/atomic"
	"testing"
)

// TestAdoptAnchor: a node that its anchor is about to drop passes to
// another anchored node that already links to it, never to one of its own
// descendants along anchors (that would close a cycle the entry point does
// not reach), and the graph stays reachable once the old anchor drops it.
// Of every three nodes tested, one is tested as built; one first has the
// neighbours it links to that are not its ancestors made its children, so
// only an ancestor may adopt it; and one has its neighbours' anchors
// cleared for the test, as if they were still being linked by another
// insert, so none of them may adopt it.
func TestAdoptAnchor(t *testing.T) {
	r := newRand(t, 7)
	const n, dim = 600, 8
	h, _ := NewHNSW(dim, L2, &HNSWOptions{M: 4, EfConstruction: 32, Seed: 1})
	for i, v := range clustered(r, n, dim, 12) {
		if err := h.Add(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, h)
	root, _ := unpackEP(h.ep.Load())
	// ancestors returns a's anchors up to the entry point, nearest first,
	// and false if they do not reach it within maxAdoptDepth steps (an
	// anchor this test cleared, say).
	ancestors := func(a uint32) ([]uint32, bool) {
		var up []uint32
		for a != root {
			a = *h.anchor(a)
			if a == noNode || len(up) >= maxAdoptDepth {
				return nil, false
			}
			up = append(up, a)
		}
		return up, true
	}
	adopted, refused, childLinks := 0, 0, 0
	for a := range h.nodes.Load() {
		u := *h.anchor(a)
		if a == root || u == noNode {
			continue
		}
		up, ok := ancestors(a)
		if !ok {
			t.Fatalf("node %d: its anchors do not reach the entry point", a)
		}
		list := h.links(a, 0)
		nbrs := slices.Clone(list[1 : 1+list[0]])
		variant := (adopted + refused) % 3
		saved := make([]uint32, len(nbrs))
		for i, w := range nbrs {
			saved[i] = *h.anchor(w)
		}
		switch variant {
		case 1:
			for _, w := range nbrs {
				if w != u && w != root && !slices.Contains(up, w) {
					*h.anchor(w) = a // a links to w, so this is a valid anchor
					if h.linksTo(w, a) {
						childLinks++
					}
				}
			}
			mustCheck(t, h)
		case 2:
			for _, w := range nbrs {
				if w != root {
					*h.anchor(w) = noNode
				}
			}
		}
		var want []uint32
		for _, w := range nbrs {
			if w == u || !h.linksTo(w, a) {
				continue
			}
			if wu, ok := ancestors(w); !ok || slices.Contains(wu, a) {
				continue // not anchored, or a descendant of a
			}
			want = append(want, w)
		}
		mu := h.lock(u)
		mu.Lock()
		ok = h.adoptAnchor(u, a)
		if ok {
			// The old anchor drops a, as a pruning would.
			l := h.links(u, 0)
			k := slices.Index(l[1:1+l[0]], a) + 1
			l[k] = l[l[0]]
			atomic.StoreUint32(&l[0], l[0]-1)
		}
		mu.Unlock()
		if variant == 2 {
			for i, w := range nbrs {
				*h.anchor(w) = saved[i]
			}
		}
		if ok != (len(want) > 0) {
			t.Fatalf("node %d (variant %d): adopted %v, want %v (candidates %v)", a, variant, ok, len(want) > 0, want)
		}
		if ok {
			if w := *h.anchor(a); !slices.Contains(want, w) {
				t.Fatalf("node %d adopted by %d, want one of %v", a, w, want)
			}
			adopted++
		} else {
			if *h.anchor(a) != u {
				t.Fatalf("node %d: a refused adoption moved its anchor from %d to %d", a, u, *h.anchor(a))
			}
			refused++
		}
		mustCheck(t, h)
		if adopted >= 30 && refused >= 10 {
			break
		}
	}
	if adopted < 30 || refused < 10 || childLinks == 0 {
		t.Fatalf("adopted %d, refused %d, %d children linking back: the test did not reach its cases", adopted, refused, childLinks)
	}
}

// TestRescueSkipsUnreadySlot: a slot that Add has allocated but not yet
// initialised must not anchor a node that rescue links in. Such a slot
// counts among the nodes, and in a fresh chunk its anchor word was zero,
// which read as "anchored by node 0"; the rescue's scan of every node then
// chose it, and initSlot wiped the link, leaving the rescued node anchored
// by a node that did not link to it, and unreachable. This replays that
// interleaving of two concurrent Adds on one goroutine.
func TestRescueSkipsUnreadySlot(t *testing.T) {
	h, _ := NewHNSW(2, L2, &HNSWOptions{M: 2, EfConstruction: 8})
	slow, err := h.allocSlot() // node 0: allocated, not yet initialised
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Add(100, []float32{1, 1}); err != nil { // node 1, the entry point
		t.Fatal(err)
	}
	id, err := h.allocSlot() // node 2, whose reverse links all went elsewhere
	if err != nil {
		t.Fatal(err)
	}
	h.initSlot(id, 101, []float32{5, 5}, 0)
	h.keys.m[101] = id
	h.rescue(id, nil)
	if a := *h.anchor(id); a != 1 {
		t.Fatalf("node %d rescued by %d, want the entry point 1", id, a)
	}
	h.initSlot(slow, 102, []float32{2, 2}, 0) // the slow insert resumes
	h.keys.m[102] = slow
	h.link(slow, 0)
	mustCheck(t, h)
}
