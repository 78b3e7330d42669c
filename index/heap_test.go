package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMinHeap drives the heap with random pushes, pops, replaceTop and
// offer, ties and negative distances included, against a sorted slice.
func TestMinHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var h minHeap
	var model []float32
	for step := range 20000 {
		d := float32(r.IntN(50) - 25) // many ties
		switch op := r.IntN(4); {
		case op == 0 || len(h) == 0:
			h.push(item{d, uint32(step)})
			model = append(model, d)
		case op == 1:
			got := h.pop()
			if got.dist != model[0] {
				t.Fatalf("step %d: pop %v, want %v", step, got.dist, model[0])
			}
			model = model[1:]
		case op == 2:
			h.replaceTop(item{d, uint32(step)})
			model[0] = d
		default:
			// offer keeps the k nearest in a heap of negated distances;
			// model it on its own heap.
			var o minHeap
			var kept []float32
			k := 1 + r.IntN(8)
			for range 30 {
				x := float32(r.IntN(20))
				o.offer(k, x, 0)
				kept = append(kept, x)
			}
			slices.Sort(kept)
			kept = kept[:k]
			var got []float32
			for len(o) > 0 {
				got = append(got, -o.pop().dist)
			}
			slices.Reverse(got)
			if !slices.Equal(got, kept) {
				t.Fatalf("step %d: offer kept %v, want %v", step, got, kept)
			}
			continue
		}
		slices.Sort(model)
		if len(h) != len(model) || len(h) > 0 && h.top().dist != model[0] {
			t.Fatalf("step %d: %d items, top %v; model %d items, %v", step, len(h), h, len(model), model)
		}
		for i := 1; i < len(h); i++ {
			if h[(i-1)/2].dist > h[i].dist {
				t.Fatalf("step %d: heap order broken at %d", step, i)
			}
		}
	}
}
