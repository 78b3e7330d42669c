package index

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// TestTinyIndexHeap checks that an index of one node holds heap in
// proportion to it, not a chunk sized for thousands of nodes: 1,000
// one-node indexes, measured as the growth of the heap in use, must stay
// under 8 KiB each beyond their first chunk's records (firstChunkBytes, or
// the one record that is larger) and, under SQ8, the codes and ranges. A
// whole chunk is 64 to 4,096 records, and the writer locks of a large
// index 32 KiB. It measures memory, not time.
func TestTinyIndexHeap(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		dim   int
		quant Quantization
	}{{8, NoQuantization}, {128, NoQuantization}, {1024, NoQuantization}, {1024, SQ8}} {
		t.Run(fmt.Sprintf("dim=%d/%v", tc.dim, tc.quant), func(t *testing.T) {
			v := make([]float32, tc.dim)
			for i := range v {
				v[i] = float32(i%5) + 1
			}
			hs := make([]*HNSW, n)
			before := heapInuse()
			for i := range hs {
				h, err := NewHNSW(tc.dim, Cosine, &HNSWOptions{Quantize: tc.quant})
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Add(uint64(i), v); err != nil {
					t.Fatal(err)
				}
				hs[i] = h
			}
			per := float64(int64(heapInuse())-int64(before)) / n
			runtime.KeepAlive(hs)
			// The record, rounded to the 4 KiB a first chunk holds; under
			// SQ8 the codes and the ranges (three floats a dimension).
			record := 4 * recordWords(tc.dim, 2*DefaultM)
			bound := 8<<10 + max(record, firstChunkBytes)
			if tc.quant == SQ8 {
				bound += codeLen(tc.dim) + 3*4*codeLen(tc.dim)
			}
			t.Logf("%.0f bytes per one-node index (record %d, bound %d), MemoryBytes %d", per, record, bound, hs[0].MemoryBytes())
			if per > float64(bound) {
				t.Errorf("a one-node index holds %.0f bytes of heap, want under %d", per, bound)
			}
		})
	}
}

// heapInuse returns the heap in use after two collections (the second
// empties the sync.Pools the first moved to their victim caches).
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestFirstChunkGrows adds nodes one at a time past a whole chunk and
// checks that the first chunk starts at firstChunkNodes and doubles, that
// the writer locks follow it, and that the index answers exactly
// afterwards (every key's vector, an exact-width search for each).
func TestFirstChunkGrows(t *testing.T) {
	for _, tc := range []struct {
		dim    int
		metric Metric
		quant  Quantization
	}{{8, Cosine, NoQuantization}, {300, L2, SQ8}, {1024, Dot, NoQuantization}} {
		t.Run(fmt.Sprintf("dim=%d/%v/%v", tc.dim, tc.metric, tc.quant), func(t *testing.T) {
			h, err := NewHNSW(tc.dim, tc.metric, &HNSWOptions{M: 4, EfConstruction: 16, Quantize: tc.quant})
			if err != nil {
				t.Fatal(err)
			}
			whole := 1 << h.chunkShift
			first := h.firstChunkNodes()
			if first >= whole || first&(first-1) != 0 || first*4*h.stride > firstChunkBytes && first > 1 {
				t.Fatalf("first chunk of %d nodes of %d bytes, whole %d", first, 4*h.stride, whole)
			}
			if len(h.locks) != first {
				t.Fatalf("%d locks for a first chunk of %d nodes", len(h.locks), first)
			}
			n := sized(whole + whole/2)
			vecs := clustered(newRand(t, uint64(tc.dim)), n, tc.dim, 10)
			want := first
			for i, v := range vecs {
				if err := h.Add(uint64(i), v); err != nil {
					t.Fatal(err)
				}
				table := *h.chunks.Load()
				if i < whole {
					for i+1 > want {
						want *= 2
					}
					if len(table) != 1 || len(table[0].ch.keys) != want {
						t.Fatalf("after %d nodes: %d chunks, the first of %d nodes, want 1 of %d", i+1, len(table), len(table[0].ch.keys), want)
					}
				}
				if got := h.stripes(len(table[0].ch.keys)); len(h.locks) != got {
					t.Fatalf("after %d nodes: %d locks, want %d", i+1, len(h.locks), got)
				}
				for _, r := range table {
					if len(r.ch.data)%16 != 0 || uintptr(r.records)%64 != 0 {
						t.Fatalf("after %d nodes: chunk records at %#x are not 64-byte aligned", i+1, r.records)
					}
				}
			}
			mustCheck(t, h)
			checkExact(t, h, vecs)
		})
	}
}

// checkExact checks that every key i of vecs holds its vector (normalised
// under Cosine) and that a search whose ef covers the index returns what
// the exact model does, for about a hundred of the vectors as queries.
func checkExact(t *testing.T, h *HNSW, vecs [][]float32) {
	t.Helper()
	model, _ := NewFlat(h.dim, h.metric)
	for i, v := range vecs {
		model.Add(uint64(i), v)
	}
	var got, want []Result
	var a, b []float32
	for i, v := range vecs {
		a, _ = h.Vector(a, uint64(i))
		b, _ = model.Vector(b, uint64(i))
		if !slices.Equal(a, b) {
			t.Fatalf("key %d: stored vector differs", i)
		}
		if i%max(1, len(vecs)/100) != 0 {
			continue
		}
		var err error
		if got, err = h.Search(got, v, 5, &SearchOptions{Ef: len(vecs)}); err != nil {
			t.Fatal(err)
		}
		want, _ = model.Search(want, v, 5, nil)
		if !sameResults(got, want) {
			t.Fatalf("query %d: %v, want %v", i, got, want)
		}
	}
}

// TestGrowFirstKeepsNodes fills a partial first chunk, grows it, and checks
// that every node's record, key, level, anchor, upper lists and codes are
// what they were, and that growing a chunk with room does nothing.
func TestGrowFirstKeepsNodes(t *testing.T) {
	h, _ := NewHNSW(100, L2, &HNSWOptions{M: 4, EfConstruction: 16, Quantize: SQ8, Seed: 3})
	first := h.firstChunkNodes()
	if first < 4 {
		t.Fatalf("first chunk of %d nodes; the test wants a few", first)
	}
	vecs := clustered(newRand(t, 5), first, 100, 3)
	for i, v := range vecs {
		if err := h.Add(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	type node struct {
		record []uint32
		key    uint64
		level  uint8
		anchor uint32
		upper  []uint32
		codes  []uint8
		cnorm  float32
	}
	nodes := func() []node {
		var ns []node
		for id := range uint32(h.nodes.Load()) {
			ch, off := h.loc(id)
			ns = append(ns, node{
				record: slices.Clone(unsafeWords(h.record(id), h.stride)),
				key:    ch.keys[off], level: ch.levels[off], anchor: ch.anchor[off],
				upper: slices.Clone(ch.upper[off]), codes: slices.Clone(h.codes(id)), cnorm: ch.cnorm[off],
			})
		}
		return ns
	}
	grow := func() {
		h.mu.Lock()
		h.alloc.Lock()
		h.growFirst()
		h.alloc.Unlock()
		h.mu.Unlock()
	}
	before := nodes()
	grow()
	if got := len((*h.chunks.Load())[0].ch.keys); got != 2*first {
		t.Fatalf("grown first chunk holds %d nodes, want %d", got, 2*first)
	}
	after := nodes()
	for id := range before {
		b, a := before[id], after[id]
		if !slices.Equal(b.record, a.record) || b.key != a.key || b.level != a.level || b.anchor != a.anchor ||
			!slices.Equal(b.upper, a.upper) || !slices.Equal(b.codes, a.codes) || b.cnorm != a.cnorm {
			t.Fatalf("node %d changed when the first chunk grew", id)
		}
	}
	for id := range uint32(2 * first) {
		if ch, off := h.loc(id); id >= uint32(first) && ch.anchor[off] != noNode {
			t.Fatalf("new slot %d has anchor %d, want none", id, ch.anchor[off])
		}
	}
	chunk := (*h.chunks.Load())[0].ch
	grow() // room left: nothing changes
	if (*h.chunks.Load())[0].ch != chunk {
		t.Fatal("growFirst replaced a first chunk that had room")
	}
	mustCheck(t, h)
	checkExact(t, h, vecs)
}

// TestConcurrentGrowth runs parallel inserts and searches on a new index,
// so that the first chunk grows (under the exclusive lock) while other
// inserts wait to allocate and searches read the graph; run it with -race.
// Then it checks the invariants and that the index answers exactly.
func TestConcurrentGrowth(t *testing.T) {
	const dim, workers = 8, 4
	perWorker := sized(400)
	vecs := clustered(newRand(t, 11), workers*perWorker, dim, 8)
	for _, quant := range []Quantization{NoQuantization, SQ8} {
		t.Run(quant.String(), func(t *testing.T) {
			h, _ := NewHNSW(dim, L2, &HNSWOptions{M: 4, EfConstruction: 24, Quantize: quant})
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var dst []Result
					for i := w; i < len(vecs); i += workers {
						if err := h.Add(uint64(i), vecs[i]); err != nil {
							t.Error(err)
							return
						}
						var err error
						if dst, err = h.Search(dst, vecs[i], 3, nil); err != nil {
							t.Error(err)
							return
						}
						if i%64 == 0 {
							h.MemoryBytes()
						}
					}
				}()
			}
			wg.Wait()
			if h.Len() != len(vecs) {
				t.Fatalf("Len %d, want %d", h.Len(), len(vecs))
			}
			mustCheck(t, h)
			checkExact(t, h, vecs)
		})
	}
}

// TestSnapshotSmallFirstChunk checks that a small index read back from a
// snapshot holds a partial first chunk too, and one past a whole chunk
// reads back into whole chunks that answer as the original does.
func TestSnapshotSmallFirstChunk(t *testing.T) {
	for _, n := range []int{3, 100, sized(1100)} {
		h, _ := NewHNSW(64, Cosine, &HNSWOptions{M: 4, EfConstruction: 16})
		vecs := clustered(newRand(t, uint64(n)), n, 64, 4)
		for i, v := range vecs {
			if err := h.Add(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := h.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		r, err := ReadHNSW(&buf)
		if err != nil {
			t.Fatal(err)
		}
		table := *r.chunks.Load()
		if got := len(table[0].ch.keys); n < 1<<r.chunkShift && got > max(r.firstChunkNodes(), 2*n) {
			t.Errorf("%d nodes read back into a first chunk of %d", n, got)
		}
		mustCheck(t, r)
		checkExact(t, r, vecs)
	}
}

// unsafeWords views the n words at p.
func unsafeWords(p unsafe.Pointer, n int) []uint32 { return unsafe.Slice((*uint32)(p), n) }
