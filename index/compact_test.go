package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// setCompactHook installs compactHook for the rest of the test.
func setCompactHook(t *testing.T, f func(step string, slice int)) {
	t.Helper()
	compactHook = f
	t.Cleanup(func() { compactHook = nil })
}

// onOtherGoroutine runs f on a goroutine of its own and waits for it: run
// from compactHook, f runs while Compact is paused between two slices, so
// it finishes only if nothing Compact holds stops it.
func onOtherGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// TestCompactBesideSearches pauses a Compact between every two of its
// slices and, at each pause, checks that the index is not held
// exclusively (a search could start), runs an exact-width search, an Add
// and a Delete on another goroutine and waits for them (they complete
// while the compaction is still in progress: it has slices left), and
// checks the invariants and the search's exactness against the model. The
// entry point is among the deleted nodes, so Compact moves it first. At
// one pause a snapshot is written and must load and check clean.
func TestCompactBesideSearches(t *testing.T) {
	const dim = 12
	r := newRand(t, 41)
	n := 1200
	h, _ := NewHNSW(dim, L2, &HNSWOptions{M: 6, EfConstruction: 32})
	model, _ := NewFlat(dim, L2)
	vecs := clustered(r, n+200, dim, 8)
	for i := range n {
		for _, idx := range []Index{h, model} {
			if err := idx.Add(uint64(i), vecs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	root, _ := unpackEP(h.ep.Load())
	rootKey := h.key(root)
	for i := range n {
		if key := uint64(i); key == rootKey || r.IntN(3) == 0 {
			h.Delete(key)
			model.Delete(key)
		}
	}
	deleted := h.Deleted()
	mustCheck(t, h)

	var calls, searches, adds atomic.Int64
	steps := map[string]int{}
	next := n
	lateDeletes := 0
	setCompactHook(t, func(step string, slice int) {
		calls.Add(1)
		steps[step] = max(steps[step], slice)
		if !h.mu.TryRLock() {
			t.Errorf("%s slice %d: the index is held exclusively between slices", step, slice)
			return
		}
		h.mu.RUnlock()
		q := vecs[(slice*7)%len(vecs)]
		var got []Result
		var err error
		onOtherGoroutine(func() {
			got, err = h.Search(nil, q, 5, &SearchOptions{Ef: next + 1})
			searches.Add(1)
		})
		want, _ := model.Search(nil, q, 5, nil)
		if err != nil || !sameResults(got, want) {
			t.Errorf("%s slice %d: search during Compact got %v %v, want %v", step, slice, got, err, want)
		}
		if next < len(vecs) && slice%4 == 0 {
			key := uint64(next)
			onOtherGoroutine(func() {
				if err := h.Add(key, vecs[next]); err != nil {
					t.Error(err)
				}
				h.Delete(key - 3)
				adds.Add(1)
			})
			model.Add(key, vecs[next])
			if model.Delete(key - 3) {
				lateDeletes++
			}
			next++
		}
		if err := h.Check(); err != nil {
			t.Errorf("%s slice %d: %v", step, slice, err)
		}
		if step == "repair" && slice == 10 {
			var buf bytes.Buffer
			if _, err := h.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			got, err := ReadHNSW(&buf)
			if err != nil {
				t.Fatalf("snapshot written during Compact: %v", err)
			}
			mustCheck(t, got)
			if got.Len() != h.Len() {
				t.Errorf("snapshot during Compact holds %d keys, the index %d", got.Len(), h.Len())
			}
		}
	})
	released := h.Compact()
	compactHook = nil
	t.Logf("released %d of %d tombstones; %d pauses %v; %d searches, %d adds and deletes during Compact", released, deleted, calls.Load(), steps, searches.Load(), adds.Load())
	if steps["anchor"] < 2 || steps["repair"] < 2 || steps["release"] < 1 {
		t.Fatalf("Compact ran in slices %v, want several", steps)
	}
	if searches.Load() != calls.Load() {
		t.Fatalf("%d searches completed during Compact, want %d", searches.Load(), calls.Load())
	}
	if released != deleted || h.Deleted() != lateDeletes {
		t.Fatalf("released %d (want %d), %d tombstones left (want the %d deleted during Compact)", released, deleted, h.Deleted(), lateDeletes)
	}
	if id, _ := unpackEP(h.ep.Load()); h.key(id) == rootKey && h.flags(id) != 0 {
		t.Fatal("the deleted entry point is still the entry point")
	}
	mustCheck(t, h)
	checkExactModel(t, h, model, vecs)
	if got := h.Compact(); got != lateDeletes {
		t.Fatalf("second Compact released %d, want %d", got, lateDeletes)
	}
	mustCheck(t, h)
	checkExactModel(t, h, model, vecs)
}

// checkExactModel checks that searches of exact width return what model does.
func checkExactModel(t *testing.T, h *HNSW, model *Flat, queries [][]float32) {
	t.Helper()
	for i, q := range queries {
		if i%7 != 0 {
			continue
		}
		got, err := h.Search(nil, q, 10, &SearchOptions{Ef: int(h.nodes.Load()) + 1})
		want, _ := model.Search(nil, q, 10, nil)
		if err != nil || !sameResults(got, want) {
			t.Fatalf("query %d: got %v %v, want %v", i, got, err, want)
		}
	}
}

// TestCompactCases: Compact with nothing deleted, with everything deleted
// (the slots are all released and reused), with everything but one node
// deleted, and under every metric and quantization; the invariants hold
// and exact-width searches agree with the model after each.
func TestCompactCases(t *testing.T) {
	const dim, n = 6, 300
	for _, metric := range []Metric{Cosine, Dot, L2} {
		for _, quant := range []Quantization{NoQuantization, SQ8} {
			for _, keep := range []int{n, 0, 1, n / 2} {
				t.Run(fmt.Sprintf("%v/%v/keep=%d", metric, quant, keep), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(keep), uint64(metric)))
					h, _ := NewHNSW(dim, metric, &HNSWOptions{M: 4, EfConstruction: 16, Quantize: quant})
					model, _ := NewFlat(dim, metric)
					vecs := clustered(r, 2*n, dim, 5)
					for i := range n {
						h.Add(uint64(i), vecs[i])
						model.Add(uint64(i), vecs[i])
					}
					for _, i := range r.Perm(n)[keep:] {
						h.Delete(uint64(i))
						model.Delete(uint64(i))
					}
					if got := h.Compact(); got != n-keep || h.Deleted() != 0 {
						t.Fatalf("released %d, want %d; %d tombstones left", got, n-keep, h.Deleted())
					}
					mustCheck(t, h)
					checkExactModel(t, h, model, vecs[:n])
					for i := n; i < 2*n-keep; i++ {
						h.Add(uint64(i), vecs[i])
						model.Add(uint64(i), vecs[i])
					}
					if h.nodes.Load() != n {
						t.Fatalf("%d slots after re-adding into the released ones, want %d", h.nodes.Load(), n)
					}
					mustCheck(t, h)
					checkExactModel(t, h, model, vecs)
				})
			}
		}
	}
}

// TestCompactConcurrent runs Compact over and over beside goroutines that
// add, replace, delete and search, and one that checks the invariants and
// writes and reloads snapshots meanwhile (run it with -race). At the end
// the invariants hold and every key is found by an exact-width search for
// its own vector.
func TestCompactConcurrent(t *testing.T) {
	const dim, workers, keys = 8, 3, 300
	rounds := sized(1200)
	r := newRand(t, 43)
	pool := clustered(r, 600, dim, 5)
	for _, o := range []struct {
		metric Metric
		quant  Quantization
	}{{L2, NoQuantization}, {Dot, NoQuantization}, {Cosine, SQ8}} {
		t.Run(fmt.Sprint(o.metric, "/", o.quant), func(t *testing.T) {
			h, _ := NewHNSW(dim, o.metric, &HNSWOptions{M: 4, EfConstruction: 24, Quantize: o.quant})
			var stop atomic.Bool
			var wg, side sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(w), 7))
					dst := make([]Result, 0, 5)
					for range rounds {
						key := uint64(r.IntN(keys))
						switch r.IntN(4) {
						case 0:
							h.Delete(key)
						case 1:
							var err error
							if dst, err = h.Search(dst, pool[r.IntN(len(pool))], 5, nil); err != nil {
								t.Error(err)
								return
							}
						default:
							if err := h.Add(key, pool[r.IntN(len(pool))]); err != nil {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			side.Add(2)
			go func() {
				defer side.Done()
				for !stop.Load() {
					h.Compact()
				}
			}()
			go func() {
				defer side.Done()
				for !stop.Load() {
					if err := h.Check(); err != nil {
						t.Error(err)
						return
					}
					var buf bytes.Buffer
					if _, err := h.WriteTo(&buf); err != nil {
						t.Error(err)
						return
					}
					got, err := ReadHNSW(&buf)
					if err == nil {
						err = got.Check()
					}
					if err != nil {
						t.Errorf("snapshot taken beside Compact: %v", err)
						return
					}
				}
			}()
			wg.Wait()
			stop.Store(true)
			side.Wait()
			mustCheck(t, h)
			h.Compact()
			mustCheck(t, h)
			if h.Deleted() != 0 {
				t.Fatalf("%d tombstones after a Compact with nothing running", h.Deleted())
			}
			n := h.Len()
			for _, key := range h.Keys(nil) {
				v, _ := h.Vector(nil, key)
				res, err := h.Search(nil, v, n, &SearchOptions{Ef: n})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(res, func(r Result) bool { return r.Key == key }) {
					t.Fatalf("key %d not found by an exact-width search", key)
				}
			}
		})
	}
}
