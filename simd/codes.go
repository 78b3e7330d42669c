package simd

// DotCodesRows sets dst[i] to the inner product of q with the unsigned 8-bit
// codes rows[i] (each code taken as the float32 of its value), for every
// row: the one-to-many kernel of a search over scalar-quantized vectors,
// whose caller turns the result into a distance with each row's scale and
// offset. len(q) must be a multiple of 8 (pad with zeros) and every row as
// long as q; it panics otherwise, or if len(dst) < len(rows).
func DotCodesRows(dst, q []float32, rows [][]uint8) {
	if len(dst) < len(rows) {
		panicLength("DotCodesRows", len(dst), len(rows))
	}
	if len(q)%8 != 0 {
		panicLength("DotCodesRows", len(q), len(q)+8-len(q)%8)
	}
	for _, r := range rows {
		if len(r) != len(q) {
			panicLength("DotCodesRows", len(r), len(q))
		}
	}
	if useAccel && len(q) != 0 {
		dotCodesRowsAccel(dst, q, rows)
		return
	}
	for i, r := range rows {
		dst[i] = dotCodesGeneric(q, r)
	}
}

// dotCodesGeneric is the pure-Go kernel of DotCodesRows: four accumulators,
// as the float kernels.
func dotCodesGeneric(q []float32, c []uint8) float32 {
	c = c[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(c[i])
		s1 += q[i+1] * float32(c[i+1])
		s2 += q[i+2] * float32(c[i+2])
		s3 += q[i+3] * float32(c[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(c[i])
	}
	return (s0 + s1) + (s2 + s3)
}
