package index

import (
	"fmt"
	"testing"
)

// TestFilteredSearch checks filtered recall against the exact filtered
// answer for predicates admitting 10%, 1% and 0.1% of the keys: the graph
// walk (plain and paired) for the first two, the exact plan over an
// allow-list for all three, and never fewer than min(k, admitted) results.
func TestFilteredSearch(t *testing.T) {
	r := newRand(t, 11)
	n, k := sized(10000), 10
	vecs := clustered(r, n, 24, 20)
	h, _ := NewHNSW(24, Cosine, &HNSWOptions{M: 12, EfConstruction: 100})
	exact, _ := NewFlat(24, Cosine)
	for i, v := range vecs {
		h.Add(uint64(i), v)
		exact.Add(uint64(i), v)
	}
	queries := clustered(r, 100, 24, 20)
	for _, every := range []int{10, 100, 1000} {
		admit := func(key uint64) bool { return key%uint64(every) == 3 }
		var allow []uint64
		for i := 0; i < n; i++ {
			if admit(uint64(i)) {
				allow = append(allow, uint64(i))
			}
		}
		plans := map[string]*SearchOptions{
			"walk":        {Ef: 64, Filter: admit},
			"walk-paired": {Ef: 64, Filter: admit},
			"exact":       {Keys: allow},
		}
		for plan, opts := range plans {
			t.Run(fmt.Sprintf("1in%d/%s", every, plan), func(t *testing.T) {
				h.pairedMin = pairedMin
				if plan == "walk-paired" {
					h.pairedMin = 0
				}
				var sum float64
				for _, q := range queries {
					got, err := h.Search(nil, q, k, opts)
					if err != nil {
						t.Fatal(err)
					}
					want, _ := exact.Search(nil, q, k, &SearchOptions{Filter: admit})
					if len(got) != min(k, len(allow)) {
						t.Fatalf("%d results, want %d", len(got), min(k, len(allow)))
					}
					for _, g := range got {
						if !admit(g.Key) {
							t.Fatalf("key %d does not pass the filter", g.Key)
						}
					}
					sum += recall(got, want)
				}
				rec := sum / float64(len(queries))
				t.Logf("recall@%d %.4f", k, rec)
				if rec < 0.95 {
					t.Fatalf("recall@%d %.4f < 0.95", k, rec)
				}
			})
		}
	}
}

// TestDeleteAndCompact deletes 30% of an index and checks that recall over
// the remaining vectors stays close to a fresh build's, before and after
// Compact, and that Compact releases the slots for reuse.
func TestDeleteAndCompact(t *testing.T) {
	r := newRand(t, 21)
	n, k := sized(6000), 10
	vecs := clustered(r, n, 24, 15)
	h, _ := NewHNSW(24, L2, &HNSWOptions{M: 8, EfConstruction: 80})
	for i, v := range vecs {
		h.Add(uint64(i), v)
	}
	fresh, _ := NewHNSW(24, L2, &HNSWOptions{M: 8, EfConstruction: 80})
	exact, _ := NewFlat(24, L2)
	for i, v := range vecs {
		if r.IntN(10) < 3 {
			h.Delete(uint64(i))
			continue
		}
		fresh.Add(uint64(i), v)
		exact.Add(uint64(i), v)
	}
	queries := clustered(r, 200, 24, 15)
	// Mean recall@10 over a sweep of ef, so one lucky or unlucky ef does
	// not decide.
	measure := func(idx Index) float64 {
		var sum float64
		efs := []int{40, 80, 160}
		for _, ef := range efs {
			for _, q := range queries {
				got, _ := idx.Search(nil, q, k, &SearchOptions{Ef: ef})
				want, _ := exact.Search(nil, q, k, nil)
				sum += recall(got, want)
			}
		}
		return sum / float64(len(queries)*len(efs))
	}
	base := measure(fresh)
	tomb := measure(h)
	mustCheck(t, h)
	released := h.Compact()
	mustCheck(t, h)
	compacted := measure(h)
	t.Logf("mean recall@10 fresh %.4f, tombstoned %.4f, compacted %.4f; released %d", base, tomb, compacted, released)
	if tomb < base-0.02 || compacted < base-0.03 {
		t.Fatalf("recall after deletes %.4f / %.4f, fresh build %.4f", tomb, compacted, base)
	}
	if released != n-exact.Len() || h.Deleted() != 0 {
		t.Fatalf("released %d slots, want %d; %d tombstones left", released, n-exact.Len(), h.Deleted())
	}
	before := h.nodes.Load()
	for i := 0; i < released; i++ {
		if err := h.Add(uint64(n+i), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if h.nodes.Load() != before {
		t.Fatalf("adds after Compact grew the slots from %d to %d instead of reusing", before, h.nodes.Load())
	}
	mustCheck(t, h)
}
