package index

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/mnemodb/mnemo/simd"
)

// Metric is the distance an index ranks by. Smaller is nearer for all three.
type Metric uint8

const (
	// Cosine ranks by cosine distance 1 - cos(a, b), in [0, 2]. Vectors are
	// normalised once, on insert, so the search computes 1 - dot.
	Cosine Metric = 1
	// Dot ranks by negative inner product, -dot(a, b): the largest inner
	// product is the nearest. Vectors are stored as given. An inner product
	// that overflows float32 is -Inf or +Inf as the sum's sign goes, and one
	// whose terms overflow both ways (components near the float32 limit)
	// has no value: its distance is +Inf, the farthest.
	Dot Metric = 2
	// L2 ranks by squared Euclidean distance, +Inf where it overflows
	// float32.
	L2 Metric = 3
)

// String returns "cosine", "dot" or "l2".
func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Dot:
		return "dot"
	case L2:
		return "l2"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// ParseMetric parses "cosine", "dot" (or "ip") and "l2" (or "euclidean").
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(s) {
	case "cosine":
		return Cosine, nil
	case "dot", "ip", "inner_product":
		return Dot, nil
	case "l2", "euclidean":
		return L2, nil
	}
	return 0, fmt.Errorf("%w: unknown metric %q (want cosine, dot or l2)", ErrInvalidOptions, s)
}

func (m Metric) valid() bool { return m >= Cosine && m <= L2 }

// Result is one hit of a search: a caller key and its distance to the query
// under the index's metric.
type Result struct {
	Key      uint64
	Distance float32
}

// SearchOptions tune one search. A nil *SearchOptions means the defaults.
type SearchOptions struct {
	// Ef is the size of the dynamic candidate list of an HNSW search
	// (hnswlib's ef). Zero means the index's default; it is raised to k
	// when smaller. Larger is slower and more accurate. Exact indexes
	// ignore it.
	Ef int
	// Filter, when set, admits a key into the results only when it returns
	// true. An HNSW search evaluates it during the graph walk: rejected
	// nodes are still traversed, and the walk goes on until it holds ef
	// admitted nodes, so a selective filter widens the search instead of
	// returning fewer results. It must be safe to call concurrently, and it
	// must not call methods of the index (it runs under the index's read
	// lock).
	Filter func(key uint64) bool
	// Keys, when non-nil, restricts the search to these keys and runs it as
	// an exact scan over them (keys not in the index are ignored; Filter
	// still applies). This is the plan of choice when a filter admits only
	// a few keys: the cost is len(Keys) distance computations and recall
	// is exact.
	Keys []uint64
	// Exact, when set, scores every live key instead of walking the graph
	// (Filter still applies): exact recall at n distance computations,
	// which for a small index is also the faster plan. Keys, when given,
	// takes precedence. Exact indexes ignore it: they always scan.
	Exact bool
}

// Index is a nearest-neighbour index over float32 vectors under uint64
// caller keys. All implementations in this package are safe for concurrent
// use by multiple goroutines.
type Index interface {
	// Dim returns the dimension every vector must have.
	Dim() int
	// Metric returns the distance the index ranks by.
	Metric() Metric
	// Len returns the number of live keys.
	Len() int
	// Add stores vec under key, replacing any vector the key had. vec is
	// copied (and normalised under Cosine); the caller may reuse it. It
	// returns an error wrapping ErrDimension, ErrNonFinite, ErrZeroVector
	// or ErrNormOverflow for bad input, and then changes nothing.
	Add(key uint64, vec []float32) error
	// Delete removes key and reports whether it was present.
	Delete(key uint64) bool
	// Search appends to dst[:0] the k nearest live keys to q, nearest
	// first, and returns the extended slice. An empty index or k <= 0
	// yields an empty result and no error. q is not modified or retained.
	Search(dst []Result, q []float32, k int, opts *SearchOptions) ([]Result, error)
	// Vector appends the stored vector of key to dst[:0] and reports
	// whether the key is present. Under Cosine the stored vector is the
	// normalised one.
	Vector(dst []float32, key uint64) ([]float32, bool)
	// Keys appends every live key to dst[:0] in ascending order.
	Keys(dst []uint64) []uint64
	// MemoryBytes estimates the memory the index holds, in bytes.
	MemoryBytes() int64
	// WriteTo writes a snapshot that Read restores without rebuilding.
	WriteTo(w io.Writer) (int64, error)
}

// Read restores an index from a snapshot written by the WriteTo method of
// [HNSW] or [Flat], choosing the implementation by the snapshot's magic
// number. Corrupt or truncated input returns an error for which IsCorruption
// is true, and so does a snapshot of another backend (package
// index/coderhnsw reads its own).
func Read(r io.Reader) (Index, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(len(hnswMagic))
	if err != nil {
		return nil, corruptf("read magic: %v", err)
	}
	switch {
	case bytes.Equal(magic, hnswMagic[:]):
		return ReadHNSW(br)
	case bytes.Equal(magic, flatMagic[:]):
		return ReadFlat(br)
	}
	return nil, corruptf("unknown magic %q", magic)
}

// CheckVector validates a vector at the API boundary: its length, finite
// components and, under Cosine, a norm that is neither zero nor too large
// for float32 (the squares of finite components can still overflow). Its
// errors wrap ErrDimension, ErrNonFinite, ErrZeroVector or
// ErrNormOverflow. Every backend (and the engine, before it writes) checks
// vectors with it, so that all agree on what is valid. O(dim).
func CheckVector(vec []float32, dim int, metric Metric) error {
	if len(vec) != dim {
		return fmt.Errorf("%w: got %d, want %d", ErrDimension, len(vec), dim)
	}
	// A finite sum of squares means every component is finite (a NaN or
	// an infinity makes it NaN or +Inf): one kernel call instead of a
	// scalar test per component. Only a vector that fails it is walked.
	if ss := simd.Dot(vec, vec); ss <= math.MaxFloat32 {
		if metric == Cosine && ss == 0 {
			return fmt.Errorf("%w: norm is 0", ErrZeroVector)
		}
		return nil
	}
	for i, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: component %d is %v", ErrNonFinite, i, x)
		}
	}
	if metric == Cosine {
		switch n := simd.Norm(vec); {
		case n == 0:
			return fmt.Errorf("%w: norm is 0", ErrZeroVector)
		case math.IsInf(float64(n), 0):
			return fmt.Errorf("%w: the sum of the squared components is %v", ErrNormOverflow, n)
		}
	}
	return nil
}

// prepare copies vec into dst (reusing its storage) and normalises it under
// Cosine. vec must have passed CheckVector.
func prepare(dst, vec []float32, metric Metric) []float32 {
	dst = append(dst[:0], vec...)
	if metric == Cosine {
		simd.Normalize(dst)
	}
	return dst
}

// distance returns the distance between a prepared query and a stored
// vector. It goes through the row kernels, as every search does, so that a
// distance is the same to the last bit whichever plan computed it (the
// graph walk, the exact scan over keys, or the flat index).
func distance(metric Metric, q, v []float32) float32 {
	var d [1]float32
	rows := [1][]float32{v}
	scoreRows(d[:], metric, q, rows[:])
	return d[0]
}

// scoreRows sets dst[i] to the distance under metric from the prepared
// query q to rows[i], in one row-kernel call.
func scoreRows(dst []float32, metric Metric, q []float32, rows [][]float32) {
	switch metric {
	case L2:
		simd.L2SquaredRows(dst, q, rows)
	case Dot:
		simd.DotRows(dst, q, rows)
		for i := range rows {
			d := -dst[i]
			if d != d {
				// NaN: Dot accepts components up to the float32 limit, and
				// the products of two such vectors can overflow to +Inf
				// and -Inf in one sum. Such a distance is +Inf, the
				// farthest, so that every search orders it the same way.
				d = float32(math.Inf(1))
			}
			dst[i] = d
		}
	default:
		simd.DotRows(dst, q, rows)
		for i := range rows {
			dst[i] = 1 - dst[i]
		}
	}
}

// sortResults orders results by distance, then key, so that equal distances
// come back in a deterministic order.
func sortResults(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int {
		switch {
		case a.Distance < b.Distance:
			return -1
		case a.Distance > b.Distance:
			return 1
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
}
