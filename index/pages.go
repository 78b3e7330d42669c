package index

import "unsafe"

// Node records are read in random order: a search at 1M x 128 touches a
// few thousand records spread over 700 MB, and with 4 KiB pages nearly
// every one of them also misses the TLB, so the page walk's own loads add
// to the cache miss. Once an index's records outgrow what the TLB covers
// with small pages, its chunks are carved from slabs whose 2 MiB-aligned
// interior is advised for transparent huge pages (on Linux, when the
// kernel gives them to advised memory only; see hugePagesOn and
// adviseHugePages). The same snapshot loaded with and without slabs
// searched clearly faster with them at 1M x 128, and little faster at
// 100k x 128 (figures in docs/performance-notes.md).
//
// The slabs are ordinary Go allocations of pointer-free words, so the
// garbage collector owns them as it owns any chunk: nothing is unmapped by
// hand, and advice the kernel does not take costs nothing but the call.

const (
	// slabMinBytes is the chunk memory an index holds before it takes
	// slabs: beyond the reach of a last-level TLB of 4 KiB pages.
	slabMinBytes = 8 << 20
	// A slab is a quarter of the chunk memory held so far, between
	// slabMinSize and slabMaxSize, rounded down to whole chunks: the Go
	// heap counts a slab whole from the start, so its unused tail stays
	// under a quarter of the index, and under 32 MB.
	slabMinSize = 4 << 20
	slabMaxSize = 32 << 20
	hugePage    = 2 << 20
)

// hugePages turns slabs off in tests that compare with and without them.
var hugePages = true

// slabs hands out the words of a chunk's records and codes; it is guarded
// by HNSW.alloc.
type slabs struct {
	held int      // bytes handed out so far
	rest []uint32 // the unused tail of the current slab
}

// words returns n zeroed words on a 64-byte boundary, n a multiple of 16.
// per is the number of words a whole chunk takes, so that a slab holds a
// whole number of chunks.
func (s *slabs) words(n, per int) []uint32 {
	s.held += 4 * n
	if !hugePages || !hugePagesOn() || s.held <= slabMinBytes || 4*per > slabMaxSize/2 {
		return alignedWords(n)
	}
	if len(s.rest) < n {
		size := min(max(s.held/4, slabMinSize), slabMaxSize)
		s.rest = alignedWords(max(1, size/(4*per)) * per)
		adviseHugePages(s.rest)
	}
	w := s.rest[:n:n]
	s.rest = s.rest[n:]
	return w
}

// bytesOf views words as bytes. Valid because the words hold no pointers
// and the view covers exactly their memory.
func bytesOf(w []uint32) []uint8 {
	return unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w))
}

// hugeRange returns the offset and length in bytes of the 2 MiB-aligned
// interior of w, length zero when it has none.
func hugeRange(w []uint32) (off, n uintptr) {
	if len(w) == 0 {
		return 0, 0
	}
	b := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	e := b + 4*uintptr(len(w))
	lo, hi := hugeUp(b), e&^(hugePage-1)
	if lo >= hi {
		return 0, 0
	}
	return lo - b, hi - lo
}

// hugeUp rounds p up to a 2 MiB boundary.
func hugeUp(p uintptr) uintptr { return (p + hugePage - 1) &^ (hugePage - 1) }
