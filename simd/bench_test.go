package simd

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

var benchDims = []int{128, 384, 768, 1536}

// sink keeps results alive so the compiler cannot drop benchmarked calls.
var sink float32

// naiveDot is the single-accumulator loop a first draft would write; the
// benchmarks report the other paths against it.
func naiveDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func naiveL2Squared(a, b []float32) float32 {
	var s float32
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// benchPaths returns the kernel paths to compare: naive, generic (pure Go)
// and, where available, accelerated.
func benchPaths() []kernelPath {
	ps := []kernelPath{
		{"naive", naiveDot, naiveL2Squared},
		{"purego", dotGeneric, l2SquaredGeneric},
	}
	if useAccel {
		ps = append(ps, kernelPath{"accel", dotAccel, l2SquaredAccel})
	}
	return ps
}

func BenchmarkDot(b *testing.B) {
	benchPair(b, func(p kernelPath) func(a, b []float32) float32 { return p.dot })
}
func BenchmarkL2Squared(b *testing.B) {
	benchPair(b, func(p kernelPath) func(a, b []float32) float32 { return p.l2 })
}

func benchPair(b *testing.B, pick func(kernelPath) func(a, b []float32) float32) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, d := range benchDims {
		x, y := randVec(r, d, 0, 1), randVec(r, d, 0, 1)
		for _, p := range benchPaths() {
			f := pick(p)
			b.Run(fmt.Sprintf("d=%d/%s", d, p.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(8 * d))
				var s float32
				for b.Loop() {
					s += f(x, y)
				}
				sink = s
			})
		}
	}
}

// BenchmarkExported measures the dispatching entry points that callers use
// (whichever path this build selected), including the one-to-many forms over
// an arena of 1,024 vectors.
func BenchmarkExported(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	const rows = 1024
	for _, d := range benchDims {
		x, y := randVec(r, d, 0, 1), randVec(r, d, 0, 1)
		arena := randVec(r, rows*d, 0, 1)
		dst := make([]float32, rows)
		ids := make([]uint32, 32)
		for i := range ids {
			ids[i] = uint32(r.IntN(rows))
		}
		single := []struct {
			name string
			f    func()
		}{
			{"Norm", func() { sink += Norm(x) }},
			{"Normalize", func() { sink += Normalize(x) }},
			{"CosineDistance", func() { sink += CosineDistance(x, y) }},
		}
		for _, k := range single {
			b.Run(fmt.Sprintf("%s/d=%d", k.name, d), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(8 * d))
				for b.Loop() {
					k.f()
				}
			})
		}
		b.Run(fmt.Sprintf("DotMany/d=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * d * rows))
			for b.Loop() {
				DotMany(dst, x, arena)
			}
		})
		b.Run(fmt.Sprintf("L2SquaredMany/d=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * d * rows))
			for b.Loop() {
				L2SquaredMany(dst, x, arena)
			}
		})
		b.Run(fmt.Sprintf("DotGather32/d=%d", d), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * d * len(ids)))
			for b.Loop() {
				DotGather(dst[:len(ids)], x, arena, ids)
			}
		})
	}
}

// BenchmarkRows scores a query against 32 rows scattered through a larger
// arena (the shape of one expanded HNSW node on layer 0), with one row
// kernel call ("rows") and with one single-pair call per row ("calls", the
// loop the row kernels replace). Dimensions are those of the standard
// benchmark sets.
func BenchmarkRows(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, d := range []int{25, 128, 784} {
		arena := randVec(r, 256*d, 0, 1)
		q := randVec(r, d, 0, 1)
		rows := make([][]float32, 32)
		for i := range rows {
			j := r.IntN(256)
			rows[i] = arena[j*d : (j+1)*d]
		}
		dst := make([]float32, len(rows))
		kernels := []struct {
			name string
			f    func()
		}{
			{"dot/rows", func() { DotRows(dst, q, rows) }},
			{"dot/calls", func() {
				for i, row := range rows {
					dst[i] = Dot(q, row)
				}
			}},
			{"l2/rows", func() { L2SquaredRows(dst, q, rows) }},
			{"l2/calls", func() {
				for i, row := range rows {
					dst[i] = L2Squared(q, row)
				}
			}},
		}
		for _, k := range kernels {
			b.Run(fmt.Sprintf("d=%d/%s", d, k.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					k.f()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
			})
		}
	}
}

// BenchmarkCodes scores a quantized query against 32 code rows scattered
// through a larger arena, as one expanded node of an SQ8 walk does, with
// every integer kernel this CPU runs and the pure-Go one, and (for
// comparison) the float32 row kernel on the same number of rows.
func BenchmarkCodes(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, d := range []int{32, 128, 784} {
		arena := make([]uint8, 256*d)
		for i := range arena {
			arena[i] = uint8(r.IntN(256))
		}
		q := make([]int8, d)
		for i := range q {
			q[i] = int8(r.IntN(256) - 128)
		}
		rows := make([][]uint8, 32)
		for i := range rows {
			j := r.IntN(256)
			rows[i] = arena[j*d : (j+1)*d]
		}
		dst := make([]int32, len(rows))
		kernels := map[string]func(){
			"generic": func() {
				for i, row := range rows {
					dst[i] = dotCodesI8Generic(q, row)
				}
			},
		}
		for name, k := range codeImpls() {
			kernels[name] = func() { k(dst, q, rows) }
		}
		fq := randVec(r, d, 0, 1)
		farena := randVec(r, 256*d, 0, 1)
		frows := make([][]float32, len(rows))
		for i := range frows {
			j := r.IntN(256)
			frows[i] = farena[j*d : (j+1)*d]
		}
		fdst := make([]float32, len(rows))
		kernels["float32-rows"] = func() { DotRows(fdst, fq, frows) }
		names := slices.Sorted(maps.Keys(kernels))
		for _, name := range names {
			b.Run(fmt.Sprintf("d=%d/%s", d, name), func(b *testing.B) {
				for b.Loop() {
					kernels[name]()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
			})
		}
	}
}
