package mnemo

import (
	"fmt"
	"math"

	"github.com/mnemodb/mnemo/simd"
)

// CheckVector reports whether a collection with config cfg accepts v as a
// record's or a query's vector: cfg.Dimension components (ErrDimension),
// all finite (ErrNonFinite), and under the cosine metric a norm that is
// neither zero (ErrZeroVector) nor too large for float32
// (ErrNormOverflow). Every backend checks vectors with it, so that all
// agree on what is valid. O(dimension).
func CheckVector(cfg CollectionConfig, v []float32) error {
	if len(v) != cfg.Dimension {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(v), cfg.Dimension)
	}
	cosine := cfg.Metric == Cosine || cfg.Metric == 0
	// A finite sum of squares means every component is finite (a NaN or an
	// infinity makes it NaN or +Inf), in one kernel call; only a vector
	// that fails it is walked to find out why.
	ss := simd.Dot(v, v)
	if ss <= math.MaxFloat32 {
		if cosine && ss == 0 {
			return fmt.Errorf("%w: norm is 0", ErrZeroVector)
		}
		return nil
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: component %d is %v", ErrNonFinite, i, x)
		}
	}
	if !cosine {
		return nil
	}
	// The squares overflowed; the norm, computed with scaling, may not.
	switch n := simd.Norm(v); {
	case n == 0:
		return fmt.Errorf("%w: norm is 0", ErrZeroVector)
	case math.IsInf(float64(n), 0):
		return fmt.Errorf("%w: the sum of the squared components is %v", ErrNormOverflow, n)
	}
	return nil
}

// Similarity converts a raw distance of metric into mnemo's one
// similarity: for Cosine 1 - d (in [-1, 1]), for Dot the inner product -d,
// for L2 1 / (1 + d) (in (0, 1]). Larger is more similar for all three.
func Similarity(metric Metric, d float32) float32 {
	switch metric {
	case Dot:
		return -d
	case L2:
		return 1 / (1 + d)
	}
	return 1 - d
}
