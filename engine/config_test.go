package engine

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/index"
)

// The data model (package mnemo) restates a few of the index's rules so
// that a backend without the index applies them too; these tests keep the
// two in step.

func TestIndexDefaultsMatch(t *testing.T) {
	if mnemo.DefaultM != index.DefaultM || mnemo.DefaultEfConstruction != index.DefaultEfConstruction || mnemo.DefaultEfSearch != index.DefaultEfSearch {
		t.Fatalf("mnemo defaults M %d, efC %d, efS %d; index %d, %d, %d", mnemo.DefaultM, mnemo.DefaultEfConstruction, mnemo.DefaultEfSearch,
			index.DefaultM, index.DefaultEfConstruction, index.DefaultEfSearch)
	}
	for _, m := range []mnemo.Metric{mnemo.Cosine, mnemo.Dot, mnemo.L2} {
		if indexMetric(m).String() != m.String() {
			t.Errorf("metric %v is the index's %v", m, indexMetric(m))
		}
	}
}

// TestConfigValidateMatchesIndex: every config mnemo accepts builds an
// index, and every HNSW parameter mnemo refuses the index refuses.
func TestConfigValidateMatchesIndex(t *testing.T) {
	for _, m := range []int{-1, 0, 1, 2, 16, mnemo.MaxM, mnemo.MaxM + 1} {
		for _, ef := range []int{-1, 0, 1, 500} {
			for _, q := range []string{"", "none", "SQ8", "sq4"} {
				cfg := mnemo.CollectionConfig{Dimension: 8, M: m, EfConstruction: ef, EfSearch: ef, Quantize: q}
				want := cfg.Validate() == nil
				_, err := newIndex(cfg.WithDefaults())
				if got := err == nil; got != want {
					t.Errorf("M %d, ef %d, quantize %q: mnemo valid %v, index built %v (%v)", m, ef, q, want, got, err)
				}
			}
		}
	}
}

// TestCheckVectorMatchesIndex: mnemo.CheckVector and index.CheckVector
// accept the same vectors and refuse the others for the same reason.
func TestCheckVectorMatchesIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	t.Logf("seed 1, 2")
	big := float32(math.MaxFloat32)
	special := []float32{0, 1, -1, big, -big, 1e19, 1e-30, float32(math.Inf(1)), float32(math.NaN())}
	pairs := []struct{ m, i error }{
		{mnemo.ErrDimension, index.ErrDimension},
		{mnemo.ErrNonFinite, index.ErrNonFinite},
		{mnemo.ErrZeroVector, index.ErrZeroVector},
		{mnemo.ErrNormOverflow, index.ErrNormOverflow},
	}
	for n := 0; n < 20000; n++ {
		dim := 1 + r.IntN(40)
		v := make([]float32, dim+r.IntN(2)*(r.IntN(3)-1))
		for i := range v {
			if r.IntN(4) == 0 {
				v[i] = special[r.IntN(len(special))]
			} else if r.IntN(3) > 0 {
				v[i] = float32(r.NormFloat64())
			}
		}
		for _, metric := range []mnemo.Metric{mnemo.Cosine, mnemo.Dot, mnemo.L2} {
			em := mnemo.CheckVector(mnemo.CollectionConfig{Dimension: dim, Metric: metric}, v)
			ei := index.CheckVector(v, dim, indexMetric(metric))
			if (em == nil) != (ei == nil) {
				t.Fatalf("%v dim %d %v: mnemo %v, index %v", metric, dim, v, em, ei)
			}
			for _, p := range pairs {
				if errors.Is(em, p.m) != errors.Is(ei, p.i) {
					t.Fatalf("%v dim %d %v: mnemo %v, index %v", metric, dim, v, em, ei)
				}
			}
		}
	}
}
