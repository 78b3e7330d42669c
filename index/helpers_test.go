package index

import (
	"math"
	"testing"

	"github.com/mnemodb/mnemo/internal/vectest"
)

// The shared generators, under the names these tests use.
var (
	clustered = vectest.Clustered
	newRand   = vectest.NewRand
)

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
