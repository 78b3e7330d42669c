//go:build !amd64 || purego

package simd

// Prefetch is a no-op on this architecture or under the purego tag; see the
// amd64 version.
func Prefetch(v []float32) {}

// PrefetchRows is a no-op on this architecture or under the purego tag;
// see the amd64 version.
func PrefetchRows(rows [][]uint8) {}
