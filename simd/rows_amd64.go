//go:build amd64 && !purego

package simd

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The row kernels in rows_amd64.s need AVX2 and FMA, which useAccel
// guarantees. Each reads n rows through their slice headers (only the data
// pointers; checkRows has verified every length is d) and writes n results.

//go:noescape
func dotRowsAVX2(dst, q *float32, d int, rows *[]float32, n int)

//go:noescape
func l2SquaredRowsAVX2(dst, q *float32, d int, rows *[]float32, n int)

//go:noescape
func dotRowsAVX512(dst, q *float32, d int, rows *[]float32, n int)

//go:noescape
func l2SquaredRowsAVX512(dst, q *float32, d int, rows *[]float32, n int)

// useAVX512 selects the AVX-512 row kernels for rows of at least
// minAVX512 floats, on CPUs (and operating systems) that support AVX-512F:
// 16 floats an instruction, as hnswlib uses when compiled for such a CPU.
// Read once.
var useAVX512 = cpu.X86.HasAVX512F

// minAVX512 is the shortest row the AVX-512 kernels take. Measured in the
// graph search against the AVX2 kernels, they were faster at d=128 under
// cosine and L2 and made no difference at d=25, so short rows stay on
// AVX2; at d=784 the kernel alone was faster still (figures in
// docs/performance-notes.md).
const minAVX512 = 64

// rowKernel is one implementation of the row kernels' assembly.
type rowKernel func(dst, q *float32, d int, rows *[]float32, n int)

// dotRowsAccel requires len(q) > 0, len(dst) >= len(rows) and every row of
// length len(q).
func dotRowsAccel(dst, q []float32, rows [][]float32) {
	if useAVX512 && len(q) >= minAVX512 {
		callRows(dotRowsAVX512, dst, q, rows)
		return
	}
	callRows(dotRowsAVX2, dst, q, rows)
}

// l2SquaredRowsAccel has dotRowsAccel's requirements.
func l2SquaredRowsAccel(dst, q []float32, rows [][]float32) {
	if useAVX512 && len(q) >= minAVX512 {
		callRows(l2SquaredRowsAVX512, dst, q, rows)
		return
	}
	callRows(l2SquaredRowsAVX2, dst, q, rows)
}

func callRows(k rowKernel, dst, q []float32, rows [][]float32) {
	if len(rows) == 0 {
		return
	}
	k(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
}

// rowImpls lists the row kernels this CPU can run, by name, for the
// cross-check tests: "avx2" always (useAccel implies it), "avx512" where
// supported.
func rowImpls() map[string][2]func(dst, q []float32, rows [][]float32) {
	m := map[string][2]func(dst, q []float32, rows [][]float32){}
	if !useAccel {
		return m
	}
	m["avx2"] = [2]func(dst, q []float32, rows [][]float32){
		func(dst, q []float32, rows [][]float32) { callRows(dotRowsAVX2, dst, q, rows) },
		func(dst, q []float32, rows [][]float32) { callRows(l2SquaredRowsAVX2, dst, q, rows) },
	}
	if useAVX512 {
		m["avx512"] = [2]func(dst, q []float32, rows [][]float32){
			func(dst, q []float32, rows [][]float32) { callRows(dotRowsAVX512, dst, q, rows) },
			func(dst, q []float32, rows [][]float32) { callRows(l2SquaredRowsAVX512, dst, q, rows) },
		}
	}
	return m
}

//go:noescape
func dotCodesI8VNNI(dst *int32, q *int8, d int, rows *[]uint8, n int)

//go:noescape
func dotCodesI8AVX2(dst *int32, q *int8, d int, rows *[]uint8, n int)

// useVNNI selects the AVX-512 VNNI code kernel: 64 code bytes an
// instruction. It needs AVX512BW too, for the masked byte loads.
var useVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI

// dotCodesI8Accel has DotCodesI8's requirements, and len(q) > 0.
func dotCodesI8Accel(dst []int32, q []int8, rows [][]uint8) {
	if len(rows) == 0 {
		return
	}
	// Direct calls, not through a func value: the kernels' noescape
	// keeps a caller's rows on its stack only when the call is static.
	if useVNNI {
		dotCodesI8VNNI(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
		return
	}
	dotCodesI8AVX2(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
}

// codeImpls lists the integer code kernels this CPU can run, by name, for
// the cross-check tests.
func codeImpls() map[string]func(dst []int32, q []int8, rows [][]uint8) {
	m := map[string]func(dst []int32, q []int8, rows [][]uint8){}
	if !useAccel {
		return m
	}
	call := func(k func(dst *int32, q *int8, d int, rows *[]uint8, n int)) func(dst []int32, q []int8, rows [][]uint8) {
		return func(dst []int32, q []int8, rows [][]uint8) {
			if len(rows) > 0 && len(q) > 0 {
				k(unsafe.SliceData(dst), unsafe.SliceData(q), len(q), unsafe.SliceData(rows), len(rows))
			}
		}
	}
	m["avx2"] = call(dotCodesI8AVX2)
	if useVNNI {
		m["vnni"] = call(dotCodesI8VNNI)
	}
	return m
}
