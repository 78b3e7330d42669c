package index

// item is a node and its distance to the query.
type item struct {
	dist float32
	id   uint32
}

// minHeap is a binary min-heap of items ordered by distance. A max-heap is a
// minHeap of negated distances (negation is exact for floats), as hnswlib
// does. It is typed, so nothing is boxed into an interface.
type minHeap []item

func (h minHeap) Len() int  { return len(h) }
func (h minHeap) top() item { return h[0] }

// push adds it, moving a hole up to its place.
func (h *minHeap) push(it item) {
	s := append(*h, it)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].dist <= it.dist {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = it
	*h = s
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	h.down()
	return top
}

// replaceTop puts it in place of the top item and restores the heap order:
// a push and a pop in one sift (hnswlib pushes, then pops).
func (h *minHeap) replaceTop(it item) {
	(*h)[0] = it
	h.down()
}

// offer keeps, in a heap of negated distances (farthest on top), the k
// nearest of the ids offered so far.
func (h *minHeap) offer(k int, d float32, id uint32) {
	if len(*h) < k {
		h.push(item{-d, id})
	} else if d < -h.top().dist {
		h.replaceTop(item{-d, id})
	}
}

// down sifts the top item down to its place. It moves a hole rather than
// swapping, and picks the smaller child by arithmetic: which child is
// smaller is a coin toss the branch predictor loses (searches measured a
// little faster than with the swapping loop; docs/performance-notes.md).
func (h *minHeap) down() {
	s := *h
	n := len(s)
	if n <= 1 {
		return
	}
	x := s[0]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n {
			m += int(b2u(s[r].dist < s[l].dist))
		}
		if x.dist <= s[m].dist {
			break
		}
		s[i] = s[m]
		i = m
	}
	s[i] = x
}
