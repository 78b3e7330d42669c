// Package simd holds the float32 vector kernels every other layer of mnemo
// computes distances with: dot product, squared Euclidean distance, norm,
// in-place normalisation, cosine distance, and one-to-many forms that score a
// query against many vectors stored back to back in one arena.
//
// # Implementations
//
// Every kernel has a portable, unrolled pure-Go implementation. On amd64 CPUs
// with AVX2 and FMA the kernels run on github.com/viterin/vek (vek32) instead.
// The choice is made once, when the package is initialised, and is reported
// by [Accelerated] and [Implementation] so that benchmark output can say which
// path ran. Building with the tag purego (go build -tags purego) forces the
// pure-Go path everywhere; CI runs the tests both ways.
//
// The row kernels [DotRows] and [L2SquaredRows], which score a query against
// vectors gathered from anywhere (a graph search's unvisited neighbours),
// have their own AVX2+FMA assembly (rows_amd64.s) on the accelerated path:
// one call loops over every row, so no row pays a call's fixed cost, and a
// masked load finishes each row, so a 25-dimensional row costs four vector
// steps rather than vek's 25 scalar ones. On CPUs with AVX-512F, rows of
// 64 floats or more go to AVX-512 versions of the same kernels.
// `go test -bench Rows ./simd/` compares them with one call per row.
//
// [DotCodesI8], the kernel of quantized search, scores signed query bytes
// against unsigned code rows in exact int32 arithmetic, so its pure-Go,
// AVX2 (codes_amd64.s, VPMADDWD) and AVX-512 VNNI (VPDPBUSD, 64 codes an
// instruction) implementations return the same integers; the tests and the
// fuzz target hold every one of them to an int64 reference. `go test -bench
// Codes ./simd/` compares them.
//
// # Contract
//
// Kernels sit on the hot path, so they do not return errors and they do not
// validate their input beyond what memory safety needs. Callers validate
// dimensions once, at the API boundary (index and engine do). A kernel given
// slices of different lengths panics with a message naming the kernel and the
// lengths; it never reads out of bounds. Kernels never allocate.
//
// # Accuracy
//
// Both paths accumulate in float32 but in different orders (and the
// accelerated path fuses multiply and add), so they may differ in the last
// bits. The tests hold both to a float64 reference within
//
//	|got - want| <= 1e-4 * sum(|a[i]*b[i]|) + 1e-30
//
// for dot products (for squared distances the sum runs over (a[i]-b[i])^2),
// which bounds the error relative to the magnitude of the terms rather than to
// a possibly cancelled result. NaN in, NaN out; infinities propagate as IEEE
// 754 says.
package simd
