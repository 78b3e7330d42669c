package simd

import (
	"fmt"
	"math"
)

// Accelerated reports whether the kernels run on the AVX2+FMA path. It is
// false under the purego build tag, on other architectures and on CPUs
// without AVX2 and FMA.
func Accelerated() bool { return useAccel }

// Implementation names the kernel path in use: "vek-avx2-fma" or "purego".
func Implementation() string {
	if useAccel {
		return "vek-avx2-fma"
	}
	return "purego"
}

// Dot returns the inner product of a and b. It panics if the lengths differ.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panicLength("Dot", len(a), len(b))
	}
	if useAccel && len(a) != 0 {
		return dotAccel(a, b)
	}
	return dotGeneric(a, b)
}

// minAccelL2 is the shortest input L2Squared sends to the accelerated
// kernel. Below it the generic loop is as fast (a vek call has a fixed
// cost that so short a vector does not repay) and exact where the float32
// sum is: the accelerated kernel squares a refined square root, which on
// some CPUs turns 4 into 3.9999995 even for a 2-d vector.
const minAccelL2 = 16

// L2Squared returns the squared Euclidean distance between a and b. It panics
// if the lengths differ.
func L2Squared(a, b []float32) float32 {
	if len(a) != len(b) {
		panicLength("L2Squared", len(a), len(b))
	}
	if useAccel && len(a) >= minAccelL2 {
		return l2SquaredAccel(a, b)
	}
	return l2SquaredGeneric(a, b)
}

// Norm returns the Euclidean norm of a; zero for an empty slice.
func Norm(a []float32) float32 {
	if useAccel && len(a) != 0 {
		return float32(math.Sqrt(float64(dotAccel(a, a))))
	}
	return float32(math.Sqrt(float64(dotGeneric(a, a))))
}

// Normalize scales a in place to unit Euclidean norm and returns the norm it
// had. A zero vector (or an empty one) is left unchanged and 0 is returned; a
// vector whose norm is not finite is left unchanged and its norm (NaN or +Inf)
// returned. Callers that need unit vectors check the result.
func Normalize(a []float32) float32 {
	n := Norm(a)
	if n == 0 || math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return n
	}
	inv := 1 / n
	for i := range a {
		a[i] *= inv
	}
	return n
}

// CosineDistance returns 1 - cos(a, b), in [0, 2]. When either vector has
// zero norm the cosine is taken as 0 and the distance is 1, so the result is
// always defined; non-finite input yields NaN. It panics if the lengths
// differ. For vectors already normalised, 1 - Dot(a, b) is cheaper.
func CosineDistance(a, b []float32) float32 {
	if len(a) != len(b) {
		panicLength("CosineDistance", len(a), len(b))
	}
	var ab, aa, bb float32
	if useAccel && len(a) != 0 {
		ab, aa, bb = dotAccel(a, b), dotAccel(a, a), dotAccel(b, b)
	} else {
		ab, aa, bb = dotGeneric(a, b), dotGeneric(a, a), dotGeneric(b, b)
	}
	if aa == 0 || bb == 0 {
		return 1
	}
	cos := float64(ab) / (math.Sqrt(float64(aa)) * math.Sqrt(float64(bb)))
	d := 1 - cos
	switch {
	case d < 0:
		d = 0
	case d > 2:
		d = 2
	}
	return float32(d)
}

// DotMany sets dst[i] to Dot(q, arena[i*d:(i+1)*d]) for every i < len(dst),
// where d = len(q). The arena holds len(dst) vectors of dimension d back to
// back; it panics unless len(arena) == len(dst)*len(q).
func DotMany(dst, q, arena []float32) {
	d := len(q)
	if len(arena) != len(dst)*d {
		panicArena("DotMany", len(arena), len(dst), d)
	}
	for i := range dst {
		dst[i] = Dot(q, arena[i*d:(i+1)*d:(i+1)*d])
	}
}

// L2SquaredMany sets dst[i] to L2Squared(q, arena[i*d:(i+1)*d]) for every
// i < len(dst), where d = len(q). It panics unless
// len(arena) == len(dst)*len(q).
func L2SquaredMany(dst, q, arena []float32) {
	d := len(q)
	if len(arena) != len(dst)*d {
		panicArena("L2SquaredMany", len(arena), len(dst), d)
	}
	for i := range dst {
		dst[i] = L2Squared(q, arena[i*d:(i+1)*d:(i+1)*d])
	}
}

// DotGather sets dst[i] to the dot product of q with row ids[i] of arena,
// where row r is arena[r*d:(r+1)*d] and d = len(q). It panics if
// len(dst) != len(ids) or a row lies outside the arena.
func DotGather(dst, q, arena []float32, ids []uint32) {
	if len(dst) != len(ids) {
		panicLength("DotGather", len(dst), len(ids))
	}
	d := len(q)
	for i, id := range ids {
		dst[i] = Dot(q, row(arena, id, d, "DotGather"))
	}
}

// L2SquaredGather sets dst[i] to the squared distance between q and row
// ids[i] of arena (see DotGather). It panics if len(dst) != len(ids) or a row
// lies outside the arena.
func L2SquaredGather(dst, q, arena []float32, ids []uint32) {
	if len(dst) != len(ids) {
		panicLength("L2SquaredGather", len(dst), len(ids))
	}
	d := len(q)
	for i, id := range ids {
		dst[i] = L2Squared(q, row(arena, id, d, "L2SquaredGather"))
	}
}

// row returns row id of an arena of d-dimensional vectors.
func row(arena []float32, id uint32, d int, op string) []float32 {
	lo := int(id) * d
	if lo+d > len(arena) {
		panicRow(op, id, d, len(arena))
	}
	return arena[lo : lo+d : lo+d]
}

//go:noinline
func panicLength(op string, a, b int) {
	panic(fmt.Sprintf("simd: %s: length mismatch: %d != %d", op, a, b))
}

//go:noinline
func panicArena(op string, arena, n, d int) {
	panic(fmt.Sprintf("simd: %s: arena has %d floats, want %d vectors x %d dims = %d", op, arena, n, d, n*d))
}

//go:noinline
func panicRow(op string, id uint32, d, arena int) {
	panic(fmt.Sprintf("simd: %s: row %d of dimension %d lies outside an arena of %d floats", op, id, d, arena))
}
