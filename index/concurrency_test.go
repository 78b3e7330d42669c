package index

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestConcurrentStress runs parallel inserts, replaces, deletes, searches
// and compactions against one index of each backend (run it with -race),
// then checks the HNSW invariants and that every surviving key is found by
// an exact-width search for its own vector.
func TestConcurrentStress(t *testing.T) {
	const dim, workers, perWorker = 12, 4, 300
	r := newRand(t, 77)
	pool := clustered(r, 500, dim, 6)
	mk := map[string]func() Index{
		"hnsw": func() Index { h, _ := NewHNSW(dim, L2, &HNSWOptions{M: 4, EfConstruction: 32}); return h },
		"flat": func() Index { f, _ := NewFlat(dim, L2); return f },
	}
	for name, newIdx := range mk {
		t.Run(name, func(t *testing.T) {
			idx := newIdx()
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					dst := make([]Result, 0, 10)
					for i := 0; i < perWorker; i++ {
						key := uint64(w*perWorker + i%150) // replaces happen too
						v := pool[(w*131+i*17)%len(pool)]
						if err := idx.Add(key, v); err != nil {
							t.Error(err)
							return
						}
						if i%5 == 0 {
							idx.Delete(uint64(w*perWorker + (i*7)%150))
						}
						var err error
						if dst, err = idx.Search(dst, v, 5, &SearchOptions{Filter: func(k uint64) bool { return k%2 == 0 }}); err != nil {
							t.Error(err)
							return
						}
						for _, res := range dst {
							if res.Key%2 != 0 {
								t.Errorf("filtered search returned key %d", res.Key)
								return
							}
						}
						if i%50 == 0 {
							idx.MemoryBytes() // reads storage that inserts write
							idx.Keys(nil)
						}
						if h, ok := idx.(*HNSW); ok && i%100 == 99 && w == 0 {
							h.Compact()
						}
					}
				}(w)
			}
			wg.Wait()
			if h, ok := idx.(*HNSW); ok {
				mustCheck(t, h)
				h.Compact()
				mustCheck(t, h)
			}
			n := idx.Len()
			for _, key := range idx.Keys(nil) {
				v, _ := idx.Vector(nil, key)
				res, err := idx.Search(nil, v, n, &SearchOptions{Ef: n})
				if err != nil {
					t.Fatal(err)
				}
				if !containsKeyAtDistance(res, key, 0) {
					t.Fatalf("key %d not found by a search for its own vector", key)
				}
			}
		})
	}
}

func containsKeyAtDistance(res []Result, key uint64, d float32) bool {
	for _, r := range res {
		if r.Key == key {
			return r.Distance == d
		}
	}
	return false
}

// TestSearchAllocs proves the search path allocates nothing once warm when
// the caller supplies the result buffer.
func TestSearchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so searches allocate")
	}
	r := newRand(t, 3)
	vecs := clustered(r, 2000, 32, 8)
	h, _ := NewHNSW(32, Cosine, nil)
	q8, _ := NewHNSW(32, Cosine, &HNSWOptions{Quantize: SQ8})
	hp, _ := NewHNSW(32, Cosine, nil)
	q8p, _ := NewHNSW(32, Cosine, &HNSWOptions{Quantize: SQ8})
	hp.pairedMin, q8p.pairedMin = 0, 0 // paired walks (see searchLayer)
	f, _ := NewFlat(32, Cosine)
	for i, v := range vecs {
		for _, idx := range []Index{h, q8, hp, q8p, f} {
			idx.Add(uint64(i), v)
		}
	}
	for name, idx := range map[string]Index{"hnsw": h, "hnsw-sq8": q8, "hnsw-paired": hp, "hnsw-sq8-paired": q8p, "flat": f} {
		for _, opts := range []*SearchOptions{nil, {Ef: 10}, {Ef: 100}, {Filter: func(k uint64) bool { return k%3 == 0 }}, {Exact: true}} {
			t.Run(fmt.Sprintf("%s/%v", name, opts != nil), func(t *testing.T) {
				dst := make([]Result, 0, 10)
				q := vecs[7]
				idx.Search(dst, q, 10, opts) // warm the pool
				allocs := testing.AllocsPerRun(200, func() {
					dst, _ = idx.Search(dst, q, 10, opts)
				})
				if allocs != 0 {
					t.Fatalf("%v allocations per search", allocs)
				}
			})
		}
	}
}

// TestExactScanDuringAdds: an exact scan of every node (SearchOptions.Exact)
// runs while Adds allocate and fill new slots; a slot still being filled
// must not be read (the race detector checks), and every result is a key
// that was added.
func TestExactScanDuringAdds(t *testing.T) {
	h, err := NewHNSW(8, Cosine, &HNSWOptions{M: 4, EfConstruction: 16})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	vecs := make([][]float32, 600)
	for i := range vecs {
		vecs[i] = make([]float32, 8)
		for j := range vecs[i] {
			vecs[i][j] = r.Float32() + 0.01
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, v := range vecs {
			if err := h.Add(uint64(i), v); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 200 {
		res, err := h.Search(nil, vecs[0], 5, &SearchOptions{Exact: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range res {
			if x.Key >= uint64(len(vecs)) {
				t.Fatalf("exact scan returned key %d, never added", x.Key)
			}
		}
	}
	wg.Wait()
}

// TestConcurrentAnchors: concurrent inserts must keep every node reachable
// from the entry point. Under the dot metric with norms that grow as the
// data arrives, each new node's nearest neighbours are other new nodes,
// some still being linked by another goroutine; two such nodes could
// anchor each other, a cycle outside the entry point's reach that pruning
// then stranded ("live node N is unreachable", in most runs before nodes
// took anchors only from anchored nodes).
func TestConcurrentAnchors(t *testing.T) {
	const dim, workers, per = 64, 8, 600
	for seed := range uint64(3) {
		h, _ := NewHNSW(dim, Dot, &HNSWOptions{M: 6, EfConstruction: 32, Seed: seed + 1})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(w)))
				for i := range per {
					v := make([]float32, dim)
					for j := range v {
						v[j] = float32(r.NormFloat64()*(1+float64(i)/20) + float64(i)/10)
					}
					if err := h.Add(uint64(w*per+i), v); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := h.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
