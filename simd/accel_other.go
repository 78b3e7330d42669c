//go:build !amd64 || purego

package simd

// useAccel is a constant here so the compiler removes the accelerated
// branches entirely.
const useAccel = false

func dotAccel(a, b []float32) float32       { return dotGeneric(a, b) }
func l2SquaredAccel(a, b []float32) float32 { return l2SquaredGeneric(a, b) }
