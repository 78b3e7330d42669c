// Package vectest holds vector test data generators shared by the index
// backends' tests. It is not promised to users.
package vectest

import (
	"math/rand/v2"
	"testing"
)

// Clustered returns n vectors of dimension dim drawn around a few random
// centres, the shape of real embedding sets (and harder for a graph than
// uniform noise).
func Clustered(r *rand.Rand, n, dim, clusters int) [][]float32 {
	centres := make([][]float32, clusters)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for d := range centres[c] {
			centres[c][d] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(clusters)]
		v := make([]float32, dim)
		for d := range v {
			v[d] = c[d] + float32(r.NormFloat64()*0.4)
		}
		out[i] = v
	}
	return out
}

// NewRand returns a seeded generator and logs the seed, so a failing
// randomized test can be replayed.
func NewRand(t testing.TB, seed uint64) *rand.Rand {
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed))
}
