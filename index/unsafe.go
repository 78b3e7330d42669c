package index

import "unsafe"

// floats views a slice of words as float32s, for the float32 prefetch of
// a neighbour list. A node record keeps its neighbour list (uint32 ids,
// accessed atomically) and its vector in one []uint32 allocation so that
// both sit in the same cache lines; HNSW.vec views the vector part the
// same way. It is valid because uint32 and float32 have the same size and
// alignment, the view covers exactly the words of w, and the allocation
// holds no pointers.
func floats(w []uint32) []float32 {
	if len(w) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(w))), len(w))
}
