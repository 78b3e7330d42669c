//go:build amd64 && !purego

package simd

import (
	"math"

	"github.com/viterin/vek"
	"github.com/viterin/vek/vek32"
)

// useAccel is read once: vek reports acceleration when the CPU has AVX2 and
// FMA (and the OS is not darwin, where vek disables it).
var useAccel = vek.Info().Acceleration

// dotAccel requires len(a) == len(b) > 0 (vek panics on empty input).
func dotAccel(a, b []float32) float32 { return vek32.Dot(a, b) }

// l2SquaredAccel requires len(a) == len(b) > 0. vek computes the Euclidean
// distance and ends in a Newton-refined reciprocal square root, so squaring
// it is within a few units in the last place of the float32 sum (27 comes
// back as 26.999998), well inside the package tolerance; computing the
// differences into a buffer and dotting them was measured several times
// slower (docs/performance-notes.md). The square root also turns an
// overflowed sum into NaN: such results are recomputed on the generic path
// so both paths agree on IEEE special values.
func l2SquaredAccel(a, b []float32) float32 {
	d := vek32.Distance(a, b)
	if d > math.MaxFloat32 || d != d {
		return l2SquaredGeneric(a, b)
	}
	return d * d
}
