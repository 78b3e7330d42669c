package simd

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzKernels decodes two equal-length float32 vectors from the fuzz input
// (any bit pattern, NaN and Inf included) and checks that the accelerated
// and generic kernels agree with each other and with a float64 reference.
// Where the terms are large enough that a float32 partial sum may overflow
// in one summation order and not another, only the absence of panics is
// checked.
func FuzzKernels(f *testing.F) {
	f.Add(floatBytes(1, 2, 3, 4, 5, 6))
	f.Add(floatBytes(0, 0, 0, 0))
	f.Add(floatBytes(float32(math.NaN()), 1, 2, 3))
	f.Add(floatBytes(float32(math.Inf(1)), 1, float32(math.Inf(-1)), 3))
	f.Add(floatBytes(3e38, 3e38, -3e38, 3e38))
	f.Add(floatBytes(1e-40, 1e-42, 1e-39, 1e-41))
	big := make([]float32, 2*100)
	for i := range big {
		big[i] = float32(i%13) - 6.5
	}
	f.Add(floatBytes(big...))
	f.Fuzz(func(t *testing.T, data []byte) {
		v := make([]float32, len(data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		n := len(v) / 2
		a, b := v[:n], v[n:2*n]

		dg, da := dotGeneric(a, b), nonEmpty(dotAccel)(a, b)
		want, mag := refDot(a, b)
		checkSame(t, "dot", dg, da, want, mag)

		lg, la := l2SquaredGeneric(a, b), nonEmpty(l2SquaredAccel)(a, b)
		wantL2 := refL2(a, b)
		checkSame(t, "l2", lg, la, wantL2, wantL2)

		// The row kernels, over the same pair given as one row and twice.
		rd, rl := make([]float32, 2), make([]float32, 2)
		DotRows(rd, a, [][]float32{b, b})
		L2SquaredRows(rl, a, [][]float32{b, b})
		for i := range 2 {
			checkSame(t, "dot rows", dg, rd[i], want, mag)
			checkSame(t, "l2 rows", lg, rl[i], wantL2, wantL2)
		}

		// The remaining kernels must not panic on any input.
		_ = CosineDistance(a, b)
		_ = Norm(a)
		c := append([]float32(nil), a...)
		if nrm := Normalize(c); nrm == 0 {
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(a[i]) {
					t.Fatalf("Normalize reported 0 but changed element %d", i)
				}
			}
		}
		if n > 0 {
			// b as an arena of n one-dimensional rows.
			dst := make([]float32, n)
			DotMany(dst, a[:1], b)
			L2SquaredMany(dst, a[:1], b)
		}
	})
}

// checkSame compares two float32 results of one kernel with the float64
// reference want whose terms have total magnitude mag. A NaN magnitude means
// some term is NaN (a NaN component, Inf*0 or Inf-Inf), which every
// summation order propagates. An infinite or huge magnitude means some
// float32 partial sum may overflow in one order and not in another, so only
// the absence of panics is checked there.
func checkSame(t *testing.T, kernel string, generic, accel float32, want, mag float64) {
	t.Helper()
	switch {
	case math.IsNaN(mag):
		if !isNaN32(generic) || !isNaN32(accel) {
			t.Fatalf("%s: a term is NaN, got generic %g, accel %g", kernel, generic, accel)
		}
	case math.IsInf(mag, 0) || mag > math.MaxFloat32/2:
	default:
		if !close(generic, want, mag) || !close(accel, want, mag) {
			t.Fatalf("%s: generic %g, accel %g, want %g (mag %g)", kernel, generic, accel, want, mag)
		}
	}
}

func isNaN32(f float32) bool { return f != f }

func floatBytes(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// FuzzCodes decodes a query of 8k float32s (any bit pattern) and k*8 codes
// from the fuzz input and checks the code kernel against the pure-Go one
// and a float64 reference.
func FuzzCodes(f *testing.F) {
	f.Add(floatBytes(1, 2, 3, 4, 5, 6, 7, 8), []byte{0, 1, 2, 3, 252, 253, 254, 255})
	f.Add(floatBytes(float32(math.NaN()), 1, 2, 3, 4, 5, 6, 7), []byte{9, 9, 9, 9, 9, 9, 9, 9})
	f.Add(floatBytes(3e38, 3e38, 3e38, 3e38, 1, 1, 1, 1), []byte{255, 255, 255, 255, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, qb, codes []byte) {
		n := min(len(qb)/4, len(codes)) &^ 7
		q := make([]float32, n)
		for i := range q {
			q[i] = math.Float32frombits(binary.LittleEndian.Uint32(qb[4*i:]))
		}
		c := codes[:n]
		var want, mag float64
		for i := range q {
			p := float64(q[i]) * float64(c[i])
			want += p
			mag += math.Abs(p)
		}
		got := make([]float32, 2)
		DotCodesRows(got, q, [][]uint8{c, c})
		g := dotCodesGeneric(q, c)
		checkSame(t, "codes", g, got[0], want, mag)
		if math.Float32bits(got[0]) != math.Float32bits(got[1]) && !(isNaN32(got[0]) && isNaN32(got[1])) {
			t.Fatalf("the same row scored %g and %g", got[0], got[1])
		}
	})
}
