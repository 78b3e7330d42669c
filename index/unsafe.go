package index

import "unsafe"

// floats views a slice of words as float32s. A node record keeps its
// neighbour list (uint32 ids, accessed atomically) and its vector in one
// []uint32 allocation so that both sit in the same cache lines; the vector
// part is read and written through this view. It is valid because uint32
// and float32 have the same size and alignment, the view covers exactly
// the words of w, and the allocation holds no pointers.
func floats(w []uint32) []float32 {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(w))), len(w))
}
