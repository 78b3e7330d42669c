package index

import (
	"slices"
	"testing"
	"unsafe"
)

// TestHugeRange checks the 2 MiB-aligned interior adviseHugePages is given.
func TestHugeRange(t *testing.T) {
	for _, words := range []int{0, 1, hugePage / 4, hugePage/4 + 1, 3 * hugePage / 4, 5 * hugePage / 4} {
		w := make([]uint32, words)
		off, n := hugeRange(w)
		if n == 0 {
			if words >= hugePage/2 { // two pages of words always hold an aligned page
				t.Errorf("%d words: no aligned interior", words)
			}
			continue
		}
		b := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
		if (b+off)%hugePage != 0 || n%hugePage != 0 || off >= hugePage || off+n > 4*uintptr(words) ||
			4*uintptr(words)-off-n >= hugePage {
			t.Errorf("%d words at %#x: interior +%d, %d bytes", words, b, off, n)
		}
	}
}

// buildSlabbed builds the same index (one goroutine, one seed, so one graph)
// with slabs on or off. 1024-d records are 4 KiB, so 4,000 nodes are about
// twice slabMinBytes.
func buildSlabbed(t *testing.T, on bool, quant Quantization, vecs [][]float32) *HNSW {
	t.Helper()
	defer func(v bool) { hugePages = v }(hugePages)
	hugePages = on
	h, err := NewHNSW(len(vecs[0]), L2, &HNSWOptions{M: 4, EfConstruction: 8, Seed: 7, Quantize: quant})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if err := h.Add(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestSlabs checks that chunks of a large index are carved from slabs,
// whole, aligned and without overlap, and that the index they hold answers
// exactly as one with every chunk allocated on its own.
func TestSlabs(t *testing.T) {
	if !hugePagesOn() {
		t.Skip("no huge page advice on this platform")
	}
	const dim = 1024
	vecs := clustered(newRand(t, 3), 4000, dim, 8)
	for _, quant := range []Quantization{NoQuantization, SQ8} {
		on := buildSlabbed(t, true, quant, vecs)
		off := buildSlabbed(t, false, quant, vecs)
		mustCheck(t, on)

		// Chunks past slabMinBytes sit back to back in slabs: records,
		// then codes, then the next chunk's records.
		type span struct{ b, e uintptr }
		var spans []span
		adjacent, slabbed, held := 0, 0, 0
		for _, r := range *on.chunks.Load() {
			for _, w := range [][]uint32{r.ch.data, wordsOf(r.ch.codes)} {
				if len(w) == 0 {
					continue
				}
				b := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
				if b%64 != 0 {
					t.Fatalf("%v: chunk memory at %#x is not 64-byte aligned", quant, b)
				}
				if n := len(spans); n > 0 && spans[n-1].e == b {
					adjacent++
				}
				if held += 4 * len(w); held > slabMinBytes {
					slabbed++
				}
				spans = append(spans, span{b, b + 4*uintptr(len(w))})
			}
		}
		slices.SortFunc(spans, func(x, y span) int { return int(x.b - y.b) })
		for i := 1; i < len(spans); i++ {
			if spans[i].b < spans[i-1].e {
				t.Fatalf("%v: chunk memory overlaps", quant)
			}
		}
		// Slabs hold 15 or more of these chunks, so at most one slabbed
		// allocation in 15 starts a slab; the others follow the one before.
		if slabbed < 10 || adjacent < slabbed*3/4 {
			t.Errorf("%v: %d of %d slabbed chunk allocations follow the previous one", quant, adjacent, slabbed)
		}

		var a, b []Result
		for i, q := range clustered(newRand(t, 4), 20, dim, 8) {
			var err error
			if a, err = on.Search(a, q, 10, &SearchOptions{Ef: 32}); err != nil {
				t.Fatal(err)
			}
			if b, err = off.Search(b, q, 10, &SearchOptions{Ef: 32}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, b) {
				t.Fatalf("%v: query %d: %v with slabs, %v without", quant, i, a, b)
			}
		}
		for _, key := range []uint64{0, 2000, 3999} {
			v, _ := on.Vector(nil, key)
			if !slices.Equal(v, vecs[key]) {
				t.Fatalf("%v: vector %d changed", quant, key)
			}
		}
	}
}

// wordsOf views bytes (a multiple of 4 long) as words.
func wordsOf(b []uint8) []uint32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}
