//go:build !amd64 || purego

package simd

func dotRowsAccel(dst, q []float32, rows [][]float32) {
	for i, r := range rows {
		dst[i] = dotGeneric(q, r)
	}
}

func l2SquaredRowsAccel(dst, q []float32, rows [][]float32) {
	for i, r := range rows {
		dst[i] = l2SquaredGeneric(q, r)
	}
}

// rowImpls lists no assembly row kernels: this build has none.
func rowImpls() map[string][2]func(dst, q []float32, rows [][]float32) { return nil }

func dotCodesI8Accel(dst []int32, q []int8, rows [][]uint8) {
	for i, r := range rows {
		dst[i] = dotCodesI8Generic(q, r)
	}
}

// codeImpls lists no assembly code kernels: this build has none.
func codeImpls() map[string]func(dst []int32, q []int8, rows [][]uint8) { return nil }
