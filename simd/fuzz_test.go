package simd

import (
	"bytes"
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

// FuzzCodes takes a query of signed bytes and codes from the fuzz input
// (the shorter length, rounded down to 16) and checks every code kernel
// against an int64 reference, exactly.
func FuzzCodes(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0x80}, 64), bytes.Repeat([]byte{255}, 64))
	f.Add(bytes.Repeat([]byte{0x7f, 0x80, 1, 0}, 20), bytes.Repeat([]byte{255, 0, 17, 254}, 20))
	f.Add([]byte{}, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, qb, codes []byte) {
		n := min(len(qb), len(codes)) &^ 15
		q := make([]int8, n)
		for i := range q {
			q[i] = int8(qb[i])
		}
		c := codes[:n]
		var want int64
		for i := range q {
			want += int64(q[i]) * int64(c[i])
		}
		impls := map[string]func(dst []int32, q []int8, rows [][]uint8){"DotCodesI8": DotCodesI8}
		for name, k := range codeImpls() {
			impls[name] = k
		}
		for name, k := range impls {
			got := make([]int32, 2)
			k(got, q, [][]uint8{c, c})
			if int64(got[0]) != want || int64(got[1]) != want {
				t.Fatalf("%s: got %d and %d, want %d", name, got[0], got[1], want)
			}
		}
		if g := dotCodesI8Generic(q, c); int64(g) != want {
			t.Fatalf("generic: got %d, want %d", g, want)
		}
	})
}
