//go:build amd64 && !purego

package simd

import "unsafe"

// The row kernels in rows_amd64.s need AVX2 and FMA, which useAccel
// guarantees. Each reads n rows through their slice headers (only the data
// pointers; checkRows has verified every length is d) and writes n results.

//go:noescape
func dotRowsAVX2(dst, q *float32, d int, rows *[]float32, n int)

//go:noescape
func l2SquaredRowsAVX2(dst, q *float32, d int, rows *[]float32, n int)

// dotRowsAccel requires len(q) > 0, len(dst) >= len(rows) and every row of
// length len(q).
func dotRowsAccel(dst, q []float32, rows [][]float32) {
	if len(rows) == 0 {
		return
	}
	dotRowsAVX2(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
}

// l2SquaredRowsAccel has dotRowsAccel's requirements.
func l2SquaredRowsAccel(dst, q []float32, rows [][]float32) {
	if len(rows) == 0 {
		return
	}
	l2SquaredRowsAVX2(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
}

//go:noescape
func dotCodesRowsAVX2(dst, q *float32, d int, rows *[]uint8, n int)

// dotCodesRowsAccel requires len(q) > 0 and a multiple of 8, len(dst) >=
// len(rows) and every row of length len(q).
func dotCodesRowsAccel(dst, q []float32, rows [][]uint8) {
	if len(rows) == 0 {
		return
	}
	dotCodesRowsAVX2(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
}
