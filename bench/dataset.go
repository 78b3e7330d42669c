package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/internal/vecio"
	"github.com/mnemodb/mnemo/simd"
)

// Dataset is a base set, its queries and the exact ground truth (ids into
// Base, nearest first) under Metric.
type Dataset struct {
	Name    string
	Metric  index.Metric
	Base    [][]float32
	Queries [][]float32
	Truth   [][]int32
}

// Dim returns the dimension of the base vectors.
func (d *Dataset) Dim() int { return len(d.Base[0]) }

// LoadTexmex reads a base, query and ground-truth file triple. The vector
// files may be fvecs or bvecs (by extension). gt may be empty, in which case
// the ground truth is computed exactly.
func LoadTexmex(name, base, query, gt string, metric index.Metric) (*Dataset, error) {
	read := func(path string) ([][]float32, error) {
		if strings.HasSuffix(path, ".bvecs") {
			return vecio.ReadBvecsFile(path, 0)
		}
		return vecio.ReadFvecsFile(path, 0)
	}
	b, err := read(base)
	if err != nil {
		return nil, fmt.Errorf("read base: %w", err)
	}
	q, err := read(query)
	if err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	if len(b) == 0 || len(q) == 0 {
		return nil, fmt.Errorf("empty base (%d) or query set (%d)", len(b), len(q))
	}
	if len(b[0]) != len(q[0]) {
		return nil, fmt.Errorf("base dimension %d, query dimension %d", len(b[0]), len(q[0]))
	}
	ds := &Dataset{Name: name, Metric: metric, Base: b, Queries: q}
	if gt == "" {
		ds.Truth = GroundTruth(b, q, metric, 100)
		return ds, nil
	}
	if ds.Truth, err = vecio.ReadIvecsFile(gt, 0); err != nil {
		return nil, fmt.Errorf("read ground truth: %w", err)
	}
	if len(ds.Truth) < len(q) {
		return nil, fmt.Errorf("ground truth has %d rows for %d queries", len(ds.Truth), len(q))
	}
	for i, row := range ds.Truth {
		for _, id := range row {
			if id < 0 || int(id) >= len(b) {
				return nil, fmt.Errorf("ground truth row %d names id %d of %d", i, id, len(b))
			}
		}
	}
	return ds, nil
}

// LoadDir reads base.fvecs, query.fvecs and groundtruth.ivecs from dir (the
// layout the synthetic-set tool writes).
func LoadDir(dir string, metric index.Metric) (*Dataset, error) {
	return LoadTexmex(filepath.Base(dir), filepath.Join(dir, "base.fvecs"), filepath.Join(dir, "query.fvecs"),
		filepath.Join(dir, "groundtruth.ivecs"), metric)
}

// SyntheticParams describe a clustered synthetic set.
type SyntheticParams struct {
	N, Queries, Dim, Clusters int
	Seed                      uint64
	Metric                    index.Metric
}

// ParseSynthetic parses "n=10000,dim=128,clusters=100,seed=1,queries=1000".
func ParseSynthetic(s string) (SyntheticParams, error) {
	p := SyntheticParams{N: 10000, Queries: 1000, Dim: 128, Clusters: 100, Seed: 1, Metric: index.Cosine}
	for _, kv := range strings.Split(s, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return p, fmt.Errorf("synthetic: %q is not key=value", kv)
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("synthetic: %s: %v", k, err)
		}
		switch k {
		case "n":
			p.N = int(n)
		case "queries", "q":
			p.Queries = int(n)
		case "dim":
			p.Dim = int(n)
		case "clusters":
			p.Clusters = int(n)
		case "seed":
			p.Seed = n
		default:
			return p, fmt.Errorf("synthetic: unknown key %q (want n, queries, dim, clusters, seed)", k)
		}
	}
	if p.N <= 0 || p.Queries <= 0 || p.Dim <= 0 || p.Clusters <= 0 {
		return p, fmt.Errorf("synthetic: n, queries, dim and clusters must be positive")
	}
	return p, nil
}

// Synthetic generates a deterministic clustered set: cluster centres from a
// standard normal, Zipf-like cluster popularity (some clusters dense, many
// sparse), per-cluster spread and per-dimension scale, and queries drawn
// the same way. Under Cosine the vectors are L2-normalised. The exact ground
// truth (top 100) is computed in parallel.
func Synthetic(p SyntheticParams) *Dataset {
	r := rand.New(rand.NewPCG(p.Seed, p.Seed^0x5851f42d4c957f2d))
	centres := make([][]float32, p.Clusters)
	scales := make([][]float32, p.Clusters)
	spread := make([]float64, p.Clusters)
	weights := make([]float64, p.Clusters)
	var total float64
	for c := range centres {
		centres[c] = make([]float32, p.Dim)
		scales[c] = make([]float32, p.Dim)
		for d := range centres[c] {
			centres[c][d] = float32(r.NormFloat64())
			scales[c][d] = float32(0.3 + 1.4*r.Float64())
		}
		spread[c] = 0.25 + 0.5*r.Float64()
		weights[c] = 1 / math.Pow(float64(c+1), 0.7)
		total += weights[c]
	}
	gen := func(n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			x, c := r.Float64()*total, 0
			for c < p.Clusters-1 && x >= weights[c] {
				x -= weights[c]
				c++
			}
			v := make([]float32, p.Dim)
			for d := range v {
				v[d] = centres[c][d] + float32(r.NormFloat64()*spread[c])*scales[c][d]
			}
			if p.Metric == index.Cosine {
				simd.Normalize(v)
			}
			out[i] = v
		}
		return out
	}
	ds := &Dataset{
		Name:   fmt.Sprintf("synthetic-n%d-d%d-c%d-s%d", p.N, p.Dim, p.Clusters, p.Seed),
		Metric: p.Metric,
		Base:   gen(p.N),
	}
	ds.Queries = gen(p.Queries)
	ds.Truth = GroundTruth(ds.Base, ds.Queries, p.Metric, 100)
	return ds
}

// GroundTruth returns, for every query, the ids of its k nearest base
// vectors under metric (exact, ties broken by id), using every CPU.
func GroundTruth(base, queries [][]float32, metric index.Metric, k int) [][]int32 {
	k = min(k, len(base))
	if metric == index.Cosine {
		normed := make([][]float32, len(base))
		for i, b := range base {
			normed[i] = prepared(b, metric)
		}
		base = normed
	}
	out := make([][]int32, len(queries))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			type cand struct {
				d  float32
				id int32
			}
			all := make([]cand, len(base))
			for qi := range next {
				q := prepared(queries[qi], metric)
				for i, b := range base {
					all[i] = cand{Distance(metric, q, b), int32(i)}
				}
				sort.Slice(all, func(a, b int) bool {
					if all[a].d != all[b].d {
						return all[a].d < all[b].d
					}
					return all[a].id < all[b].id
				})
				row := make([]int32, k)
				for i := range row {
					row[i] = all[i].id
				}
				out[qi] = row
			}
		}()
	}
	for qi := range queries {
		next <- qi
	}
	close(next)
	wg.Wait()
	return out
}

// prepared returns v normalised under Cosine (a copy), else v.
func prepared(v []float32, metric index.Metric) []float32 {
	if metric != index.Cosine {
		return v
	}
	c := append([]float32(nil), v...)
	simd.Normalize(c)
	return c
}

// Distance is the distance an index of metric reports between prepared
// vectors, computed by the same row kernels as the indexes' searches, so
// the two agree to the last bit.
func Distance(metric index.Metric, a, b []float32) float32 {
	var d [1]float32
	rows := [1][]float32{b}
	switch metric {
	case index.L2:
		simd.L2SquaredRows(d[:], a, rows[:])
		return d[0]
	case index.Dot:
		simd.DotRows(d[:], a, rows[:])
		return -d[0]
	}
	simd.DotRows(d[:], a, rows[:])
	return 1 - d[0]
}
