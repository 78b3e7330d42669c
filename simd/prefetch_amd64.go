//go:build amd64 && !purego

package simd

import "unsafe"

//go:noescape
func prefetchLines(p unsafe.Pointer, lines int)

// Prefetch asks the CPU to start loading v into cache without waiting for
// it, so that a later read finds it there. Graph searches call it for the
// next vector they will score while they score the current one, which
// overlaps memory latency with arithmetic (hnswlib does the same with
// _mm_prefetch). It has no effect on results, and is a no-op on other
// architectures and under the purego tag.
func Prefetch(v []float32) {
	if len(v) == 0 {
		return
	}
	// The pointer is to the first element of a non-empty slice, and the
	// line count covers only the slice's own bytes.
	prefetchLines(unsafe.Pointer(unsafe.SliceData(v)), (len(v)*4+63)/64)
}

//go:noescape
func prefetchRows(rows *[]uint8, n int, lines int)

// PrefetchRows starts loading every row of rows, all of which must be as
// long as the first, as Prefetch does one vector: a search over codes
// gathers a node's unvisited neighbours and starts all their loads before
// it scores the first, so the loads overlap one another.
func PrefetchRows(rows [][]uint8) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return
	}
	prefetchRows(unsafe.SliceData(rows), len(rows), (len(rows[0])+63)/64)
}
