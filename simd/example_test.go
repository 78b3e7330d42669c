package simd_test

import (
	"fmt"

	"github.com/mnemodb/mnemo/simd"
)

func ExampleDot() {
	a := []float32{1, 2, 3}
	b := []float32{4, 5, 6}
	// The accelerated path may differ from exact float32 arithmetic in
	// the last bits, so print with a sensible precision.
	fmt.Printf("%.4g %.4g\n", simd.Dot(a, b), simd.L2Squared(a, b))
	// Output: 32 27
}

func ExampleNormalize() {
	v := []float32{3, 4}
	norm := simd.Normalize(v)
	fmt.Println(norm, v)
	zero := []float32{0, 0}
	fmt.Println(simd.Normalize(zero), zero)
	// Output:
	// 5 [0.6 0.8]
	// 0 [0 0]
}

func ExampleCosineDistance() {
	fmt.Println(simd.CosineDistance([]float32{1, 0}, []float32{0, 2}))
	fmt.Println(simd.CosineDistance([]float32{1, 0}, []float32{-3, 0}))
	fmt.Println(simd.CosineDistance([]float32{0, 0}, []float32{1, 1}))
	// Output:
	// 1
	// 2
	// 1
}

func ExampleDotMany() {
	q := []float32{1, 1}
	arena := []float32{ // three vectors of dimension 2, back to back
		1, 0,
		0, 2,
		3, 3,
	}
	scores := make([]float32, 3)
	simd.DotMany(scores, q, arena)
	fmt.Println(scores)
	// Output: [1 2 6]
}
