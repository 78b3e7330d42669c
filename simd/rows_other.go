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

func dotCodesRowsAccel(dst, q []float32, rows [][]uint8) {
	for i, r := range rows {
		dst[i] = dotCodesGeneric(q, r)
	}
}

// rowImpls lists no assembly row kernels: this build has none.
func rowImpls() map[string][2]func(dst, q []float32, rows [][]float32) { return nil }
