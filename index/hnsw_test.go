package index

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHNSWModel runs random adds, deletes, compactions and searches against
// a Flat model; a search whose ef covers the index must be exact, in plain
// and paired walks (see searchLayer) alike.
func TestHNSWModel(t *testing.T) {
	for _, metric := range []Metric{Cosine, Dot, L2} {
		for _, m := range []int{2, 4, 16} {
			for _, paired := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/M=%d/paired=%v", metric, m, paired), func(t *testing.T) {
					testHNSWModel(t, metric, m, paired)
				})
			}
		}
	}
}

func testHNSWModel(t *testing.T, metric Metric, m int, paired bool) {
	r := newRand(t, uint64(m)*7+uint64(metric))
	const dim = 8
	h, err := NewHNSW(dim, metric, &HNSWOptions{M: m, EfConstruction: 32, Seed: uint64(m)})
	if err != nil {
		t.Fatal(err)
	}
	if paired {
		h.pairedMin = 0
	}
	model, _ := NewFlat(dim, metric)
	pool := clustered(r, 400, dim, 5)
	var got, want []Result
	for op := 0; op < sized(1500); op++ {
		key := uint64(r.IntN(300))
		switch x := r.IntN(100); {
		case x < 55:
			v := pool[r.IntN(len(pool))]
			if err := h.Add(key, v); err != nil {
				t.Fatal(err)
			}
			if err := model.Add(key, v); err != nil {
				t.Fatal(err)
			}
		case x < 75:
			if a, b := h.Delete(key), model.Delete(key); a != b {
				t.Fatalf("op %d: Delete(%d) = %v, model %v", op, key, a, b)
			}
		case x < 78:
			h.Compact()
		default:
			q := pool[r.IntN(len(pool))]
			k := 1 + r.IntN(12)
			n := model.Len()
			got, err = h.Search(got, q, k, &SearchOptions{Ef: n + 1})
			if err != nil {
				t.Fatal(err)
			}
			want, _ = model.Search(want, q, k, nil)
			if !sameResults(got, want) {
				t.Fatalf("op %d: search k=%d with ef >= n:\n got %v\nwant %v", op, k, got, want)
			}
			odd := func(key uint64) bool { return key%2 == 1 }
			got, err = h.Search(got, q, k, &SearchOptions{Exact: true, Filter: odd})
			if err != nil {
				t.Fatal(err)
			}
			want, _ = model.Search(want, q, k, &SearchOptions{Filter: odd})
			if !sameResults(got, want) {
				t.Fatalf("op %d: exact search k=%d over odd keys:\n got %v\nwant %v", op, k, got, want)
			}
		}
		if h.Len() != model.Len() {
			t.Fatalf("op %d: Len %d, model %d", op, h.Len(), model.Len())
		}
		mustCheck(t, h)
	}
	mustCheck(t, h)
	h.Compact()
	mustCheck(t, h)
	keys := h.Keys(nil)
	if fmt.Sprint(keys) != fmt.Sprint(model.Keys(nil)) {
		t.Fatalf("keys differ:\n%v\n%v", keys, model.Keys(nil))
	}
	for _, k := range keys {
		a, _ := h.Vector(nil, k)
		b, _ := model.Vector(nil, k)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("vector of %d differs", k)
		}
	}
}

func TestBadInput(t *testing.T) {
	indexes := map[string]func() Index{
		"hnsw": func() Index { h, _ := NewHNSW(3, Cosine, nil); return h },
		"flat": func() Index { f, _ := NewFlat(3, Cosine); return f },
	}
	nan := float32(math.NaN())
	for name, mk := range indexes {
		t.Run(name, func(t *testing.T) {
			idx := mk()
			res, err := idx.Search(nil, []float32{1, 0, 0}, 5, nil)
			if err != nil || len(res) != 0 {
				t.Fatalf("empty index: %v, %v", res, err)
			}
			adds := []struct {
				vec  []float32
				want error
			}{
				{[]float32{1, 2}, ErrDimension},
				{[]float32{1, 2, 3, 4}, ErrDimension},
				{nil, ErrDimension},
				{[]float32{1, nan, 3}, ErrNonFinite},
				{[]float32{1, float32(math.Inf(-1)), 3}, ErrNonFinite},
				{[]float32{0, 0, 0}, ErrZeroVector},
				{[]float32{3e38, 3e38, 3e38}, ErrNormOverflow},
			}
			for _, a := range adds {
				if err := idx.Add(1, a.vec); !errors.Is(err, a.want) {
					t.Errorf("Add(%v) = %v, want %v", a.vec, err, a.want)
				}
			}
			if idx.Len() != 0 {
				t.Fatalf("rejected adds changed Len to %d", idx.Len())
			}
			if err := idx.Add(1, []float32{1, 2, 3}); err != nil {
				t.Fatal(err)
			}
			for _, q := range [][]float32{{1, 2}, {nan, 1, 1}, {0, 0, 0}} {
				if _, err := idx.Search(nil, q, 3, nil); err == nil {
					t.Errorf("Search(%v) accepted", q)
				}
			}
			for _, k := range []int{0, -1} {
				if res, err := idx.Search(nil, []float32{1, 2, 3}, k, nil); err != nil || len(res) != 0 {
					t.Errorf("k=%d: %v, %v", k, res, err)
				}
			}
			if idx.Delete(99) {
				t.Error("Delete of an absent key reported true")
			}
			if _, ok := idx.Vector(nil, 99); ok {
				t.Error("Vector of an absent key reported true")
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	err := (&HNSWOptions{M: 1, EfConstruction: -1, EfSearch: -2}).Validate()
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{"M is 1", "EfConstruction is -1", "EfSearch is -2"} {
		if !containsStr(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := NewHNSW(0, Cosine, nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("dim 0: %v", err)
	}
	if _, err := NewHNSW(4, Metric(9), nil); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("metric 9: %v", err)
	}
	if _, err := ParseMetric("manhattan"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("ParseMetric: %v", err)
	}
	for _, s := range []string{"cosine", "dot", "l2", "L2", "ip", "euclidean"} {
		if _, err := ParseMetric(s); err != nil {
			t.Errorf("ParseMetric(%q): %v", s, err)
		}
	}
}

func containsStr(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || containsStr(s[1:], sub)))
}

// TestVisitedReset checks the visited bitset across searches of every size:
// after reset nothing is visited, whether the last search touched a few
// words (cleared one by one) or most of them (cleared whole), and ids past
// the set grow it.
func TestVisitedReset(t *testing.T) {
	var s searcher
	r := rand.New(rand.NewPCG(7, 7))
	n := uint32(10000)
	for round, touch := range []int{3, 9000, 1, 0, 5000, 40, 20000} {
		s.reset(n)
		seen := map[uint32]bool{}
		for done := 0; done < touch; {
			// A neighbour list's worth of ids, some past the set and
			// some repeated, marked by gather or one by one by visit.
			list := make([]uint32, r.IntN(40))
			for i := range list {
				list[i] = r.Uint32N(n + n/2)
				if i > 0 && r.IntN(8) == 0 {
					list[i] = list[r.IntN(i)]
				}
			}
			done += len(list) + 1
			if r.IntN(2) == 0 {
				var want []uint32
				for _, id := range list {
					if !seen[id] {
						want = append(want, id)
					}
					seen[id] = true
				}
				if got := s.gather(s.batch[:0], list); !slices.Equal(got, want) {
					t.Fatalf("round %d: gather(%v) = %v, want %v", round, list, got, want)
				}
				continue
			}
			for _, id := range list {
				if got := s.visit(id); got == seen[id] {
					t.Fatalf("round %d: visit(%d) = %v after %v", round, id, got, seen[id])
				}
				seen[id] = true
			}
		}
		for id := range seen {
			if s.visit(id) {
				t.Fatalf("round %d: %d not marked", round, id)
			}
		}
	}
	s.reset(n)
	for id := range n + n/2 {
		if !s.visit(id) {
			t.Fatalf("%d still marked after reset", id)
		}
	}
}

// TestPairedWalk compares paired walks (see searchLayer) with plain ones
// on the same graph. A paired walk expands nodes in another order and
// tightens its bound differently, so single queries can do better or worse
// (a probe over 144 seeds and shapes found one at 0.004 below plain); on
// average it does a little better at small ef. The test allows 0.01 at
// each ef, which a walk that lost the second candidate's neighbours
// exceeds by far, and requires the two walks to differ somewhere, or the
// walk was not paired at all.
func TestPairedWalk(t *testing.T) {
	for _, quant := range []Quantization{NoQuantization, SQ8} {
		t.Run(quant.String(), func(t *testing.T) {
			r := newRand(t, 5)
			const dim, k = 24, 10
			vecs := clustered(r, sized(6000), dim, 30)
			h, _ := NewHNSW(dim, Cosine, &HNSWOptions{M: 8, EfConstruction: 64, Quantize: quant})
			model, _ := NewFlat(dim, Cosine)
			for i, v := range vecs {
				h.Add(uint64(i), v)
				model.Add(uint64(i), v)
			}
			queries := clustered(r, 300, dim, 30)
			want := make([][]Result, len(queries))
			for i, q := range queries {
				want[i], _ = model.Search(nil, q, k, nil)
			}
			differ := 0
			for _, ef := range []int{k, 20, 40} {
				var rec [2]float64
				var got [2][]Result
				for i, q := range queries {
					for p, min := range []uint32{pairedMin, 0} {
						h.pairedMin = min
						var err error
						got[p], err = h.Search(got[p], q, k, &SearchOptions{Ef: ef})
						if err != nil {
							t.Fatal(err)
						}
						rec[p] += recall(got[p], want[i]) / float64(len(queries))
					}
					if !sameResults(got[0], got[1]) {
						differ++
					}
				}
				t.Logf("ef %d: recall@%d plain %.4f paired %.4f", ef, k, rec[0], rec[1])
				if rec[1] < rec[0]-0.01 {
					t.Errorf("ef %d: paired recall %.4f below plain %.4f", ef, rec[1], rec[0])
				}
			}
			if differ == 0 {
				t.Error("paired and plain walks returned the same results for every query")
			}
		})
	}
}

// TestInGraph checks the node count that decides whether queries walk
// paired: slots that Compact released do not count, tombstones do, and
// reused slots count again.
func TestInGraph(t *testing.T) {
	r := newRand(t, 8)
	vecs := clustered(r, 110, 8, 4)
	h, _ := NewHNSW(8, L2, &HNSWOptions{M: 4, EfConstruction: 16})
	for i, v := range vecs[:100] {
		h.Add(uint64(i), v)
	}
	for i := 0; i < 30; i++ {
		h.Delete(uint64(i))
	}
	if got := h.inGraph(); got != 100 {
		t.Fatalf("after deletes: %d nodes in the graph, want 100 (tombstones are walked)", got)
	}
	h.Compact()
	if got := h.inGraph(); got != 70 {
		t.Fatalf("after Compact: %d nodes in the graph, want 70", got)
	}
	for i, v := range vecs[100:] {
		h.Add(uint64(100+i), v)
	}
	if got := h.inGraph(); got != 80 {
		t.Fatalf("after 10 adds into released slots: %d nodes in the graph, want 80", got)
	}
}

// TestDotOverflow: Dot and L2 accept components up to the float32 limit,
// where inner products overflow, to NaN when terms overflow both ways. No
// search may return a NaN distance, and a search with ef >= n must still
// agree with the flat index (an independent probe found 84 of 100 Dot
// queries differing before NaN distances became +Inf).
func TestDotOverflow(t *testing.T) {
	for _, metric := range []Metric{Dot, L2} {
		for _, paired := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/paired=%v", metric, paired), func(t *testing.T) {
				r := newRand(t, 1)
				const dim = 4
				h, _ := NewHNSW(dim, metric, &HNSWOptions{M: 4, EfConstruction: 16})
				if paired {
					h.pairedMin = 0
				}
				f, _ := NewFlat(dim, metric)
				vecs := make([][]float32, 300)
				for i := range vecs {
					v := make([]float32, dim)
					for j := range v {
						v[j] = float32(r.NormFloat64())
						if r.IntN(3) == 0 {
							v[j] = float32(math.Copysign(3e38, r.NormFloat64()))
						}
					}
					vecs[i] = v
					if err := h.Add(uint64(i), v); err != nil {
						t.Fatal(err)
					}
					if err := f.Add(uint64(i), v); err != nil {
						t.Fatal(err)
					}
				}
				mustCheck(t, h)
				for qi, q := range vecs[:100] {
					got, err := h.Search(nil, q, 10, &SearchOptions{Ef: len(vecs) + 1})
					if err != nil {
						t.Fatal(err)
					}
					want, _ := f.Search(nil, q, 10, nil)
					for _, g := range got {
						if math.IsNaN(float64(g.Distance)) {
							t.Fatalf("query %d: NaN distance for key %d", qi, g.Key)
						}
					}
					if !sameResults(got, want) {
						t.Fatalf("query %d with ef >= n:\n got %v\nwant %v", qi, got, want)
					}
				}
			})
		}
	}
}
