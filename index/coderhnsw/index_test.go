//go:build !windows

package coderhnsw

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo/index"
)

func TestBadInput(t *testing.T) {
	idx, err := New(3, index.Cosine, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := idx.Search(nil, []float32{1, 0, 0}, 5, nil)
	if err != nil || len(res) != 0 {
		t.Fatalf("empty index: %v, %v", res, err)
	}
	nan := float32(math.NaN())
	adds := []struct {
		name string
		vec  []float32
		want error
	}{
		{"short", []float32{1, 2}, index.ErrDimension},
		{"long", []float32{1, 2, 3, 4}, index.ErrDimension},
		{"nil", nil, index.ErrDimension},
		{"NaN", []float32{1, nan, 3}, index.ErrNonFinite},
		{"-Inf", []float32{1, float32(math.Inf(-1)), 3}, index.ErrNonFinite},
		{"zero", []float32{0, 0, 0}, index.ErrZeroVector},
		{"norm overflow", []float32{3e38, 3e38, 3e38}, index.ErrNormOverflow},
	}
	for _, a := range adds {
		t.Run(a.name, func(t *testing.T) {
			if err := idx.Add(1, a.vec); !errors.Is(err, a.want) {
				t.Errorf("Add(%v) = %v, want %v", a.vec, err, a.want)
			}
		})
	}
	if idx.Len() != 0 {
		t.Fatalf("rejected adds changed Len to %d", idx.Len())
	}
	if err := idx.Add(1, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{{1, 2}, {nan, 1, 1}, {0, 0, 0}} {
		if _, err := idx.Search(nil, q, 3, nil); err == nil {
			t.Errorf("Search(%v) accepted", q)
		}
	}
	for _, k := range []int{0, -1} {
		if res, err := idx.Search(nil, []float32{1, 2, 3}, k, nil); err != nil || len(res) != 0 {
			t.Errorf("k=%d: %v, %v", k, res, err)
		}
	}
	if idx.Delete(99) {
		t.Error("Delete of an absent key reported true")
	}
	if _, ok := idx.Vector(nil, 99); ok {
		t.Error("Vector of an absent key reported true")
	}
}

func TestNewOptions(t *testing.T) {
	bad := []struct {
		name   string
		dim    int
		metric index.Metric
		opts   *Options
	}{
		{"dim 0", 0, index.L2, nil},
		{"dim too large", maxDim + 1, index.L2, nil},
		{"metric 9", 4, index.Metric(9), nil},
		{"negative M", 4, index.L2, &Options{M: -1}},
		{"M too large", 4, index.L2, &Options{M: maxM + 1}},
		{"negative EfSearch", 4, index.L2, &Options{EfSearch: -1}},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if _, err := New(b.dim, b.metric, b.opts); !errors.Is(err, index.ErrInvalidOptions) {
				t.Fatalf("err = %v, want ErrInvalidOptions", err)
			}
		})
	}
	idx, err := New(4, index.Dot, &Options{M: 8, EfSearch: 100, Seed: 3})
	if err != nil || idx.Dim() != 4 || idx.Metric() != index.Dot || idx.Len() != 0 {
		t.Fatalf("New: %v (dim %d, metric %v)", err, idx.Dim(), idx.Metric())
	}
}

// TestDeleteAndReplace checks the tombstones: a deleted key is never
// returned, and a replaced key only at the distance of its new vector.
func TestDeleteAndReplace(t *testing.T) {
	idx, _ := New(2, index.L2, &Options{M: 4})
	for key := uint64(0); key < 20; key++ {
		idx.Add(key, []float32{float32(key), 0})
	}
	idx.Add(5, []float32{100, 0}) // replace
	if !idx.Delete(7) || idx.Delete(7) {
		t.Fatal("Delete(7) twice did not report true, then false")
	}
	if idx.Len() != 19 {
		t.Fatalf("Len = %d, want 19", idx.Len())
	}
	for _, x := range []float32{0, 5, 6, 7, 19, 99} {
		q := []float32{x, 0}
		res, err := idx.Search(nil, q, 10, nil)
		if err != nil || len(res) == 0 {
			t.Fatalf("search at %v: %v, %v", x, res, err)
		}
		for i, r := range res {
			switch {
			case r.Key == 7:
				t.Fatalf("search at %v returned the deleted key: %v", x, res)
			case r.Key == 5 && r.Distance != (100-x)*(100-x):
				t.Fatalf("search at %v returned key 5 at %v, the distance of its old vector: %v", x, r.Distance, res)
			case i > 0 && res[i-1].Distance > r.Distance:
				t.Fatalf("search at %v: results out of order: %v", x, res)
			}
		}
	}
	res, _ := idx.Search(nil, []float32{6, 0}, 2, &index.SearchOptions{Keys: []uint64{5, 7, 8, 8, 42}})
	if len(res) != 2 || res[0].Key != 8 || res[1].Key != 5 {
		t.Fatalf("search over keys: %v, want 8 then 5", res)
	}
	if v, ok := idx.Vector(nil, 5); !ok || v[0] != 100 {
		t.Fatalf("Vector(5) = %v, %v", v, ok)
	}
	if keys := idx.Keys(nil); len(keys) != 19 || keys[0] != 0 || keys[18] != 19 {
		t.Fatalf("Keys = %v", keys)
	}
}

// TestConcurrentStress runs parallel inserts, replaces, deletes and filtered
// searches against one index (run it with -race). Its recall makes an
// exhaustive self-search meaningless, so only the filter is checked.
func TestConcurrentStress(t *testing.T) {
	const dim, workers, perWorker = 12, 4, 300
	r := newRand(t, 77)
	pool := clustered(r, 500, dim, 6)
	idx, _ := New(dim, index.L2, &Options{M: 4})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			dst := make([]index.Result, 0, 10)
			for i := 0; i < perWorker; i++ {
				key := uint64(w*perWorker + i%150) // replaces happen too
				v := pool[(w*131+i*17)%len(pool)]
				if err := idx.Add(key, v); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 0 {
					idx.Delete(uint64(w*perWorker + (i*7)%150))
				}
				var err error
				opts := &index.SearchOptions{Filter: func(k uint64) bool { return k%2 == 0 }}
				if i%3 == 0 {
					opts.Ef = 20 // a non-default Ef takes the write lock
				}
				if dst, err = idx.Search(dst, v, 5, opts); err != nil {
					t.Error(err)
					return
				}
				for _, res := range dst {
					if res.Key%2 != 0 {
						t.Errorf("filtered search returned key %d", res.Key)
						return
					}
				}
				if i%50 == 0 {
					idx.MemoryBytes()
					idx.Keys(nil)
				}
			}
		}(w)
	}
	wg.Wait()
	if n := len(idx.Keys(nil)); n != idx.Len() {
		t.Fatalf("Keys has %d keys, Len says %d", n, idx.Len())
	}
}
