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
