package simd

// DotCodesI8 sets dst[i] to the inner product of the signed query bytes q
// with the unsigned code bytes rows[i], exactly, in int32, for every row:
// the one-to-many kernel of a search over scalar-quantized vectors with a
// quantized query. Every implementation returns the same integers. len(q)
// must be a multiple of 16 (pad both with zeros) and every row as long as
// q; it panics otherwise, or if len(dst) < len(rows). The sum cannot
// overflow below 2^31 / (128*255) = 65,793 bytes.
func DotCodesI8(dst []int32, q []int8, rows [][]uint8) {
	if len(dst) < len(rows) {
		panicLength("DotCodesI8", len(dst), len(rows))
	}
	if len(q)%16 != 0 {
		panicLength("DotCodesI8", len(q), len(q)+16-len(q)%16)
	}
	for _, r := range rows {
		if len(r) != len(q) {
			panicLength("DotCodesI8", len(r), len(q))
		}
	}
	if len(q) == 0 {
		clear(dst[:len(rows)])
		return
	}
	if useAccel {
		dotCodesI8Accel(dst, q, rows)
		return
	}
	for i, r := range rows {
		dst[i] = dotCodesI8Generic(q, r)
	}
}

// dotCodesI8Generic is the pure-Go kernel of DotCodesI8: two accumulators
// over a range loop, which the compiler keeps free of bounds checks.
func dotCodesI8Generic(q []int8, c []uint8) int32 {
	c = c[:len(q)]
	var s0, s1 int32
	for i := 0; i < len(q); i += 2 {
		s0 += int32(q[i]) * int32(c[i])
		s1 += int32(q[i+1]) * int32(c[i+1])
	}
	return s0 + s1
}
