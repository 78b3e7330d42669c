package simd

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRowsAgainstReference cross-checks the row kernels against the float64
// reference (and so against the generic kernels, which the same test
// holds to it) at every length 0..300 and the common embedding sizes, with
// rows that start at every word offset modulo 8 and row counts around the
// kernels' loop boundaries.
func TestRowsAgainstReference(t *testing.T) {
	seed := uint64(20261201)
	t.Logf("seed %d, implementation %s, row kernels %d", seed, Implementation(), len(rowImpls()))
	r := rand.New(rand.NewPCG(seed, seed))
	for _, d := range testLengths() {
		for _, n := range []int{0, 1, 3, 9} {
			scale := []float32{1, 1e-3, 100}[d%3]
			q := randVec(r, d, d%4, scale)
			rows := make([][]float32, n)
			for i := range rows {
				rows[i] = randVec(r, d, (i+d)%8, scale)
			}
			impls := map[string][2]func(dst, q []float32, rows [][]float32){"dispatch": {DotRows, L2SquaredRows}}
			for name, k := range rowImpls() {
				if d > 0 {
					impls[name] = k
				}
			}
			for name, k := range impls {
				dots, l2s := make([]float32, n+1), make([]float32, n+1)
				dots[n], l2s[n] = 42, 42
				k[0](dots, q, rows)
				k[1](l2s, q, rows)
				for i, row := range rows {
					want, mag := refDot(q, row)
					if !close(dots[i], want, mag) || !close(dotGeneric(q, row), want, mag) {
						t.Fatalf("%s dot d=%d row %d of %d: got %g, generic %g, want %g (mag %g)", name, d, i, n, dots[i], dotGeneric(q, row), want, mag)
					}
					want = refL2(q, row)
					if !close(l2s[i], want, want) {
						t.Fatalf("%s l2 d=%d row %d of %d: got %g, want %g", name, d, i, n, l2s[i], want)
					}
				}
				if dots[n] != 42 || l2s[n] != 42 {
					t.Fatalf("%s d=%d n=%d: a row kernel wrote past its rows", name, d, n)
				}
			}
		}
	}
}

// TestRowsSpecialValues checks that the row kernels agree with the single
// kernels on NaN, infinities and float32 overflow.
func TestRowsSpecialValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, d := range []int{3, 8, 13, 40} {
		q := make([]float32, d)
		for i := range q {
			q[i] = 1
		}
		rows := [][]float32{make([]float32, d), make([]float32, d), make([]float32, d)}
		rows[0][d-1] = nan
		rows[1][d/2] = inf
		for i := range rows[2] {
			rows[2][i] = 3e38
		}
		dots, l2s := make([]float32, 3), make([]float32, 3)
		DotRows(dots, q, rows)
		L2SquaredRows(l2s, q, rows)
		if !math.IsNaN(float64(dots[0])) || !math.IsNaN(float64(l2s[0])) {
			t.Fatalf("d=%d NaN row: dot %g, l2 %g; want NaN", d, dots[0], l2s[0])
		}
		if !math.IsInf(float64(dots[1]), 1) || !math.IsInf(float64(l2s[1]), 1) {
			t.Fatalf("d=%d +Inf row: dot %g, l2 %g; want +Inf", d, dots[1], l2s[1])
		}
		if !math.IsInf(float64(l2s[2]), 1) || l2SquaredGeneric(q, rows[2]) != l2s[2] {
			t.Fatalf("d=%d overflowing row: l2 %g, generic %g; want +Inf", d, l2s[2], l2SquaredGeneric(q, rows[2]))
		}
	}
}

func TestRowsPanics(t *testing.T) {
	q := make([]float32, 4)
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"DotRows short dst", func() { DotRows(make([]float32, 1), q, [][]float32{q, q}) }, "simd: DotRows: length mismatch: 1 != 2"},
		{"DotRows short row", func() { DotRows(make([]float32, 2), q, [][]float32{q, q[:3]}) }, "simd: DotRows: length mismatch: 3 != 4"},
		{"L2SquaredRows long row", func() { L2SquaredRows(make([]float32, 1), q, [][]float32{make([]float32, 5)}) }, "simd: L2SquaredRows: length mismatch: 5 != 4"},
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

func TestRowsZeroAllocs(t *testing.T) {
	q := make([]float32, 128)
	rows := make([][]float32, 32)
	for i := range rows {
		rows[i] = make([]float32, 128)
	}
	dst := make([]float32, 32)
	if n := testing.AllocsPerRun(100, func() { DotRows(dst, q, rows) }); n != 0 {
		t.Errorf("DotRows allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { L2SquaredRows(dst, q, rows) }); n != 0 {
		t.Errorf("L2SquaredRows allocates %v times per call", n)
	}
}

// TestDotCodesI8 checks every integer code kernel against an int64
// reference, exactly, at every padded length up to 320 and the common
// embedding sizes, over the whole range of both byte types (the extremes
// included), with rows that are offset in memory.
func TestDotCodesI8(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	impls := map[string]func(dst []int32, q []int8, rows [][]uint8){"DotCodesI8": DotCodesI8}
	for name, f := range codeImpls() {
		impls[name] = f
	}
	lengths := []int{0}
	for d := 16; d <= 320; d += 16 {
		lengths = append(lengths, d)
	}
	for _, d := range append(lengths, 384, 768, 784, 1536) {
		q := make([]int8, d)
		for j := range q {
			q[j] = int8(r.IntN(256) - 128)
		}
		if d > 0 {
			q[0], q[d-1] = -128, 127
		}
		rows := make([][]uint8, 7)
		for i := range rows {
			rows[i] = make([]uint8, d+i%3)[i%3:]
			for j := range rows[i] {
				rows[i][j] = uint8(r.IntN(256))
			}
			if d > 0 && i == 0 {
				rows[i][0], rows[i][d-1] = 255, 255
			}
		}
		for name, f := range impls {
			dst := make([]int32, len(rows)+1)
			dst[len(rows)] = 12345
			f(dst, q, rows)
			for i, row := range rows {
				var want int64
				for j := range q {
					want += int64(q[j]) * int64(row[j])
				}
				if int64(dst[i]) != want {
					t.Fatalf("%s d=%d row %d: got %d, want %d", name, d, i, dst[i], want)
				}
				if g := dotCodesI8Generic(q, row); int64(g) != want {
					t.Fatalf("generic d=%d row %d: got %d, want %d", d, i, g, want)
				}
			}
			if dst[len(rows)] != 12345 {
				t.Fatalf("%s d=%d wrote past the last row", name, d)
			}
		}
	}
	for name, f := range map[string]func(){
		"unpadded":  func() { DotCodesI8(make([]int32, 1), make([]int8, 8), [][]uint8{make([]uint8, 8)}) },
		"short row": func() { DotCodesI8(make([]int32, 1), make([]int8, 16), [][]uint8{make([]uint8, 15)}) },
		"short dst": func() { DotCodesI8(nil, make([]int8, 16), [][]uint8{make([]uint8, 16)}) },
	} {
		func() {
			defer func() {
				if msg, _ := recover().(string); !strings.Contains(msg, "simd: DotCodesI8: length mismatch") {
					t.Errorf("%s: panic %q", name, msg)
				}
			}()
			f()
		}()
	}
	dst := make([]int32, 4)
	rows := [][]uint8{make([]uint8, 128), make([]uint8, 128), make([]uint8, 128), make([]uint8, 128)}
	q := make([]int8, 128)
	if n := testing.AllocsPerRun(100, func() { DotCodesI8(dst, q, rows) }); n != 0 {
		t.Errorf("DotCodesI8 allocates %v times per call", n)
	}
}
