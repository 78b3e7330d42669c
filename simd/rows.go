package simd

// DotRows sets dst[i] to Dot(q, rows[i]) for every row. It is the
// one-to-many kernel of a graph search: the rows are vectors gathered from
// wherever they are stored (one call scores every unvisited neighbour of a
// node), and the accelerated path loops over them inside one assembly call
// instead of paying a call's fixed cost per row. It panics if
// len(dst) < len(rows) or a row's length differs from len(q).
func DotRows(dst, q []float32, rows [][]float32) {
	checkRows("DotRows", dst, q, rows)
	if useAccel && len(q) != 0 {
		dotRowsAccel(dst, q, rows)
		return
	}
	for i, r := range rows {
		dst[i] = dotGeneric(q, r)
	}
}

// L2SquaredRows sets dst[i] to L2Squared(q, rows[i]) for every row (see
// DotRows). It panics if len(dst) < len(rows) or a row's length differs from
// len(q).
func L2SquaredRows(dst, q []float32, rows [][]float32) {
	checkRows("L2SquaredRows", dst, q, rows)
	if useAccel && len(q) != 0 {
		l2SquaredRowsAccel(dst, q, rows)
		return
	}
	for i, r := range rows {
		dst[i] = l2SquaredGeneric(q, r)
	}
}

// checkRows panics unless dst has room for a result per row and every row
// has the query's length, which is what the assembly kernels rely on.
func checkRows(op string, dst, q []float32, rows [][]float32) {
	if len(dst) < len(rows) {
		panicLength(op, len(dst), len(rows))
	}
	for _, r := range rows {
		if len(r) != len(q) {
			panicLength(op, len(r), len(q))
		}
	}
}
