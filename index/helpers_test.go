package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// clustered returns n vectors of dimension dim drawn around a few random
// centres, the shape of real embedding sets (and harder for a graph than
// uniform noise).
func clustered(r *rand.Rand, n, dim, clusters int) [][]float32 {
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

// newRand returns a seeded generator and logs the seed.
func newRand(t testing.TB, seed uint64) *rand.Rand {
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed))
}

// recall returns |got ∩ want| / |want| by key.
func recall(got, want []Result) float64 {
	if len(want) == 0 {
		return 1
	}
	in := make(map[uint64]bool, len(want))
	for _, w := range want {
		in[w.Key] = true
	}
	hit := 0
	for _, g := range got {
		if in[g.Key] {
			hit++
		}
	}
	return float64(hit) / float64(len(want))
}

// sameResults reports whether two result lists hold the same distances in
// the same order (keys may differ only among equal distances).
func sameResults(a, b []Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Distance != b[i].Distance && math.Abs(float64(a[i].Distance-b[i].Distance)) > 1e-6 {
			return false
		}
	}
	return true
}

func mustCheck(t testing.TB, h *HNSW) {
	t.Helper()
	if err := h.Check(); err != nil {
		t.Fatalf("invariants: %v", err)
	}
}

// sized scales a test's size down under the race detector, which slows
// single-goroutine code about tenfold and adds nothing to it; the
// concurrency tests keep their full size.
func sized(n int) int {
	if raceEnabled {
		return max(n/4, 1)
	}
	return n
}
