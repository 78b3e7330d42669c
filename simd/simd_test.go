package simd

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// relTol is the documented tolerance: errors are bounded relative to the sum
// of the magnitudes of the terms (see the package doc).
const relTol = 1e-4

// testLengths is every length 0..300 plus the common embedding sizes.
func testLengths() []int {
	var ls []int
	for n := 0; n <= 300; n++ {
		ls = append(ls, n)
	}
	return append(ls, 384, 768, 1024, 1536, 3072)
}

// refDot returns the float64 dot product and the sum of |a[i]*b[i]|.
func refDot(a, b []float32) (dot, mag float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		mag += math.Abs(p)
	}
	return dot, mag
}

// refL2 returns the float64 squared distance (which is its own magnitude).
func refL2(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}

func close(got float32, want, mag float64) bool {
	return math.Abs(float64(got)-want) <= relTol*mag+1e-30
}

type kernelPath struct {
	name string
	dot  func(a, b []float32) float32
	l2   func(a, b []float32) float32
}

// paths lists the implementations to cross-check: the generic one always,
// the accelerated one where this build and CPU have it, and the exported
// dispatching functions.
func paths() []kernelPath {
	ps := []kernelPath{
		{"generic", dotGeneric, l2SquaredGeneric},
		{"dispatch", Dot, L2Squared},
	}
	if useAccel {
		ps = append(ps, kernelPath{"accel", nonEmpty(dotAccel), nonEmpty(l2SquaredAccel)})
	}
	return ps
}

// nonEmpty adapts an accelerated kernel (which requires len > 0) to accept
// empty input the way the exported functions do.
func nonEmpty(f func(a, b []float32) float32) func(a, b []float32) float32 {
	return func(a, b []float32) float32 {
		if len(a) == 0 {
			return 0
		}
		return f(a, b)
	}
}

// randVec returns n values in [-scale, scale) starting at offset off of a
// larger slice, so that sub-slices are not 32-byte aligned.
func randVec(r *rand.Rand, n, off int, scale float32) []float32 {
	buf := make([]float32, n+off)
	for i := range buf {
		buf[i] = (r.Float32()*2 - 1) * scale
	}
	return buf[off:]
}

func TestKernelsAgainstReference(t *testing.T) {
	seed := uint64(20261130)
	t.Logf("seed %d, implementation %s", seed, Implementation())
	r := rand.New(rand.NewPCG(seed, seed))
	for _, p := range paths() {
		t.Run(p.name, func(t *testing.T) {
			for _, n := range testLengths() {
				for off := 0; off < 4; off++ {
					scale := []float32{1, 1e-3, 100}[off%3]
					a, b := randVec(r, n, off, scale), randVec(r, n, 3-off, scale)
					want, mag := refDot(a, b)
					if got := p.dot(a, b); !close(got, want, mag) {
						t.Fatalf("dot n=%d off=%d: got %g, want %g (mag %g)", n, off, got, want, mag)
					}
					want = refL2(a, b)
					if got := p.l2(a, b); !close(got, want, want) {
						t.Fatalf("l2 n=%d off=%d: got %g, want %g", n, off, got, want)
					}
				}
			}
		})
	}
}

func TestNormNormalizeCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range testLengths() {
		if n == 0 {
			continue
		}
		a, b := randVec(r, n, n%4, 3), randVec(r, n, 0, 3)
		aa, _ := refDot(a, a)
		if got, want := Norm(a), math.Sqrt(aa); math.Abs(float64(got)-want) > relTol*want {
			t.Fatalf("Norm n=%d: got %g, want %g", n, got, want)
		}
		ab, mag := refDot(a, b)
		bb, _ := refDot(b, b)
		wantCos := 1 - ab/math.Sqrt(aa*bb)
		if got := CosineDistance(a, b); math.Abs(float64(got)-wantCos) > relTol*mag/math.Sqrt(aa*bb)+1e-6 {
			t.Fatalf("CosineDistance n=%d: got %g, want %g", n, got, wantCos)
		}
		c := append([]float32(nil), a...)
		if got := Normalize(c); math.Abs(float64(got)-math.Sqrt(aa)) > relTol*math.Sqrt(aa) {
			t.Fatalf("Normalize n=%d returned %g, want %g", n, got, math.Sqrt(aa))
		}
		if nn := Norm(c); math.Abs(float64(nn)-1) > 1e-5 {
			t.Fatalf("Normalize n=%d: norm afterwards %g", n, nn)
		}
	}
}

func TestZeroAndSpecialVectors(t *testing.T) {
	zero := make([]float32, 16)
	one := make([]float32, 16)
	one[3] = 2
	tests := []struct {
		name string
		got  float32
		want float32
	}{
		{"norm of zero", Norm(zero), 0},
		{"norm of empty", Norm(nil), 0},
		{"normalize zero returns 0", Normalize(append([]float32(nil), zero...)), 0},
		{"cosine zero-zero", CosineDistance(zero, zero), 1},
		{"cosine zero-x", CosineDistance(zero, one), 1},
		{"cosine self", CosineDistance(one, one), 0},
		{"cosine opposite", CosineDistance(one, []float32{0, 0, 0, -5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), 2},
		{"dot empty", Dot(nil, nil), 0},
		{"l2 empty", L2Squared(nil, nil), 0},
		{"cosine empty", CosineDistance(nil, nil), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %g, want %g", tt.got, tt.want)
			}
		})
	}
	z := append([]float32(nil), zero...)
	Normalize(z)
	for i, v := range z {
		if v != 0 {
			t.Fatalf("Normalize changed a zero vector at %d: %g", i, v)
		}
	}
	nan := []float32{1, float32(math.NaN()), 3}
	if d := Dot(nan, nan); !math.IsNaN(float64(d)) {
		t.Fatalf("Dot with NaN = %g, want NaN", d)
	}
	inf := []float32{1, float32(math.Inf(1)), 3}
	if d := L2Squared(inf, []float32{0, 0, 0}); !math.IsInf(float64(d), 1) {
		t.Fatalf("L2Squared with +Inf = %g, want +Inf", d)
	}
	keep := append([]float32(nil), inf...)
	if n := Normalize(keep); !math.IsInf(float64(n), 1) || keep[0] != 1 {
		t.Fatalf("Normalize(+Inf vector) = %g, %v; want +Inf and unchanged", n, keep)
	}
}

func TestManyAndGather(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, d := range []int{1, 7, 8, 33, 128, 384} {
		const n = 17
		q := randVec(r, d, 1, 1)
		arena := randVec(r, n*d, 2, 1)
		dots, l2s := make([]float32, n), make([]float32, n)
		DotMany(dots, q, arena)
		L2SquaredMany(l2s, q, arena)
		ids := []uint32{16, 0, 5, 5, 9}
		gd, gl := make([]float32, len(ids)), make([]float32, len(ids))
		DotGather(gd, q, arena, ids)
		L2SquaredGather(gl, q, arena, ids)
		for i := 0; i < n; i++ {
			row := arena[i*d : (i+1)*d]
			if dots[i] != Dot(q, row) || l2s[i] != L2Squared(q, row) {
				t.Fatalf("d=%d row %d: many (%g, %g) != single (%g, %g)", d, i, dots[i], l2s[i], Dot(q, row), L2Squared(q, row))
			}
		}
		for i, id := range ids {
			if gd[i] != dots[id] || gl[i] != l2s[id] {
				t.Fatalf("d=%d gather %d (row %d): (%g, %g) != (%g, %g)", d, i, id, gd[i], gl[i], dots[id], l2s[id])
			}
		}
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	a, b := make([]float32, 4), make([]float32, 5)
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"Dot", func() { Dot(a, b) }, "simd: Dot: length mismatch: 4 != 5"},
		{"L2Squared", func() { L2Squared(a, b) }, "simd: L2Squared: length mismatch: 4 != 5"},
		{"CosineDistance", func() { CosineDistance(a, b) }, "simd: CosineDistance: length mismatch"},
		{"DotMany short arena", func() { DotMany(make([]float32, 2), a, b) }, "simd: DotMany: arena has 5 floats, want 2 vectors x 4 dims = 8"},
		{"L2SquaredMany long arena", func() { L2SquaredMany(make([]float32, 1), a, b) }, "simd: L2SquaredMany: arena has 5 floats"},
		{"DotGather row outside", func() { DotGather(make([]float32, 1), a, make([]float32, 8), []uint32{2}) }, "simd: DotGather: row 2 of dimension 4 lies outside an arena of 8 floats"},
		{"L2SquaredGather dst", func() { L2SquaredGather(make([]float32, 2), a, b, []uint32{0}) }, "simd: L2SquaredGather: length mismatch: 2 != 1"},
		{"DotGather huge id", func() { DotGather(make([]float32, 1), a, make([]float32, 8), []uint32{math.MaxUint32}) }, "lies outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tt.want) {
					t.Fatalf("panic %q, want it to contain %q", msg, tt.want)
				}
			}()
			tt.f()
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	a, b := make([]float32, 384), make([]float32, 384)
	for i := range a {
		a[i], b[i] = float32(i), float32(384-i)
	}
	arena := make([]float32, 8*384)
	dst := make([]float32, 8)
	ids := []uint32{1, 3, 5, 7}
	fns := map[string]func(){
		"Dot":             func() { Dot(a, b) },
		"L2Squared":       func() { L2Squared(a, b) },
		"Norm":            func() { Norm(a) },
		"Normalize":       func() { Normalize(a) },
		"CosineDistance":  func() { CosineDistance(a, b) },
		"DotMany":         func() { DotMany(dst, a, arena) },
		"L2SquaredMany":   func() { L2SquaredMany(dst, a, arena) },
		"DotGather":       func() { DotGather(dst[:4], a, arena, ids) },
		"L2SquaredGather": func() { L2SquaredGather(dst[:4], a, arena, ids) },
	}
	for name, f := range fns {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}
