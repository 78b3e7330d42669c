//go:build !windows

package coderhnsw

import (
	"cmp"
	"fmt"
	"math"
	mrand "math/rand"
	"slices"
	"sync"

	"github.com/coder/hnsw"
	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/simd"
)

// Index is an [index.Index] backed by github.com/coder/hnsw v0.6.1, kept so
// users and the benchmark harness can compare it with the native HNSW on the
// same data. It is not the default, and its recall is low: measured with this
// repository's benchmarks it reaches a recall@10 of 0.086 on a clustered
// 100k x 128 set and 0.236 on siftsmall whatever its EfSearch, because in v0.6.1
// the max-heap used for results is a min-heap (its Max is not the maximum),
// the result set is capped at k rather than ef, the layer search stops at the
// first hop that does not improve, there is no efConstruction nor neighbour
// heuristic, and every search allocates a map. We wrap it without patching
// it.
//
// The library's Delete corrupts its graph in v0.6.1 (a later Search
// dereferences a removed node and panics, and it replenishes links with a
// hard-coded cosine distance), so this backend never calls it: Delete and
// the replace half of Add tombstone the old node, searches skip tombstones,
// and their memory is reclaimed only when the index is rebuilt (Read
// rebuilds from the live records). The library has no filtered search
// either: Filter and tombstones are applied to an over-fetched result (k,
// then 4k, 16k, ... candidates). Keys is served by an exact scan. A panic
// inside the library is returned as an error. Index is safe for concurrent
// use by multiple goroutines (the graph itself is not; a lock serialises
// writes, and searches with a non-default Ef).
type Index struct {
	dim      int
	metric   index.Metric
	efSearch int // the graph's EfSearch between searches

	// mu protects the following fields.
	mu     sync.RWMutex
	g      *hnsw.Graph[uint64] // over internal ids
	keys   map[uint64]uint64   // caller key -> live internal id
	owners map[uint64]uint64   // internal id -> caller key, tombstones included
	dead   int                 // tombstoned internal ids
	nextID uint64
}

var _ index.Index = (*Index)(nil)

// Options configure an Index. A zero field means its default.
type Options struct {
	M        int    // links per node, default 16
	EfSearch int    // default 64
	Seed     uint64 // level generator seed; zero means a fixed default
}

// Distance functions registered with coder/hnsw so that its Export can name
// them. Cosine vectors are normalised on insert, as in the native index.
const (
	coderCosine = "mnemo-cosine"
	coderDot    = "mnemo-dot"
	coderL2     = "mnemo-l2squared"
)

func init() {
	hnsw.RegisterDistanceFunc(coderCosine, func(a, b []float32) float32 { return 1 - simd.Dot(a, b) })
	hnsw.RegisterDistanceFunc(coderDot, func(a, b []float32) float32 { return -simd.Dot(a, b) })
	hnsw.RegisterDistanceFunc(coderL2, simd.L2Squared)
}

// New returns an empty coder/hnsw index of dimension dim under metric. It
// returns an error wrapping index.index.ErrInvalidOptions for a dimension, metric
// or option out of range.
func New(dim int, metric index.Metric, opts *Options) (*Index, error) {
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: dimension %d, want 1..%d", index.ErrInvalidOptions, dim, maxDim)
	}
	if !validMetric(metric) {
		return nil, fmt.Errorf("%w: unknown metric %d", index.ErrInvalidOptions, metric)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.M < 0 || o.M > maxM || o.EfSearch < 0 {
		return nil, fmt.Errorf("%w: M %d, EfSearch %d", index.ErrInvalidOptions, o.M, o.EfSearch)
	}
	g := hnsw.NewGraph[uint64]()
	if o.M != 0 {
		g.M = o.M
	}
	g.Ml = 1 / math.Log(float64(max(g.M, 2)))
	g.EfSearch = index.DefaultEfSearch
	if o.EfSearch != 0 {
		g.EfSearch = o.EfSearch
	}
	seed := o.Seed
	if seed == 0 {
		seed = defaultSeed
	}
	g.Rng = newMathRand(seed)
	g.Distance = coderDistance(metric)
	return &Index{dim: dim, metric: metric, efSearch: g.EfSearch, g: g, keys: make(map[uint64]uint64), owners: make(map[uint64]uint64)}, nil
}

// newMathRand returns the math/rand generator coder/hnsw takes.
func newMathRand(seed uint64) *mrand.Rand { return mrand.New(mrand.NewSource(int64(seed))) }

func coderDistance(m index.Metric) hnsw.DistanceFunc {
	switch m {
	case index.L2:
		return simd.L2Squared
	case index.Dot:
		return func(a, b []float32) float32 { return -simd.Dot(a, b) }
	}
	return func(a, b []float32) float32 { return 1 - simd.Dot(a, b) }
}

// Dim returns the dimension of the index.
func (c *Index) Dim() int { return c.dim }

// Metric returns the metric of the index.
func (c *Index) Metric() index.Metric { return c.metric }

// Len returns the number of keys.
func (c *Index) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.keys)
}

// Add stores vec under key, replacing (tombstoning) its previous vector.
func (c *Index) Add(key uint64, vec []float32) (err error) {
	if err := index.CheckVector(vec, c.dim, c.metric); err != nil {
		return err
	}
	return c.addPrepared(key, prepare(nil, vec, c.metric))
}

// addPrepared adds a vector that is already validated and normalised; v is
// retained.
func (c *Index) addPrepared(key uint64, v []float32) (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer recoverCoder(&err)
	id := c.nextID
	c.g.Add(hnsw.MakeNode(id, v))
	c.nextID++
	if old, ok := c.keys[key]; ok {
		c.dead++
		c.owners[old] = tombstoneOwner
	}
	c.keys[key] = id
	c.owners[id] = key
	return nil
}

// tombstoneOwner marks an internal id whose key was deleted or replaced.
// Caller keys are looked up through c.keys, so the marker value never
// reaches a caller.
const tombstoneOwner = ^uint64(0)

// recoverCoder turns a panic inside coder/hnsw into an error.
func recoverCoder(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("coderhnsw: coder/hnsw panicked: %v", p)
	}
}

// Delete removes key (a tombstone; see the type's doc).
func (c *Index) Delete(key uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := c.keys[key]
	if !ok {
		return false
	}
	delete(c.keys, key)
	c.owners[id] = tombstoneOwner
	c.dead++
	return true
}

// Search returns up to k nearest keys found by coder/hnsw, nearest first.
func (c *Index) Search(dst []index.Result, q []float32, k int, opts *index.SearchOptions) (_ []index.Result, err error) {
	dst = dst[:0]
	if err := index.CheckVector(q, c.dim, c.metric); err != nil {
		return dst, err
	}
	var o index.SearchOptions
	if opts != nil {
		o = *opts
	}
	if k <= 0 {
		return dst, nil
	}
	qq := prepare(nil, q, c.metric)
	if o.Keys != nil {
		return c.scanKeys(dst, qq, k, o.Keys, o.Filter), nil
	}
	if o.Ef != 0 && o.Ef != c.efSearch {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.g.EfSearch = o.Ef
		defer func() { c.g.EfSearch = c.efSearch }()
	} else {
		c.mu.RLock()
		defer c.mu.RUnlock()
	}
	if len(c.keys) == 0 {
		return dst, nil
	}
	defer recoverCoder(&err)
	total := len(c.keys) + c.dead
	for fetch := k; ; fetch *= 4 {
		dst = dst[:0]
		for _, n := range c.g.Search(qq, fetch) {
			key, live := c.liveKey(n.Key)
			if live && (o.Filter == nil || o.Filter(key)) {
				dst = append(dst, index.Result{Key: key, Distance: c.g.Distance(qq, n.Value)})
			}
		}
		if len(dst) >= k || fetch >= total {
			break
		}
	}
	sortResults(dst)
	if len(dst) > k {
		dst = dst[:k]
	}
	return dst, nil
}

// liveKey returns the caller key of internal id, and whether it is live.
func (c *Index) liveKey(id uint64) (uint64, bool) {
	key, ok := c.owners[id]
	return key, ok && key != tombstoneOwner && c.keys[key] == id
}

func (c *Index) scanKeys(dst []index.Result, q []float32, k int, keys []uint64, filter func(uint64) bool) []index.Result {
	c.mu.RLock()
	defer c.mu.RUnlock()
	seen := make(map[uint64]bool, len(keys))
	for _, key := range keys {
		if seen[key] || (filter != nil && !filter(key)) {
			continue
		}
		seen[key] = true
		if id, ok := c.keys[key]; ok {
			v, _ := c.g.Lookup(id)
			dst = append(dst, index.Result{Key: key, Distance: c.g.Distance(q, v)})
		}
	}
	sortResults(dst)
	if len(dst) > k {
		dst = dst[:k]
	}
	return dst
}

// Vector appends the stored vector of key to dst[:0].
func (c *Index) Vector(dst []float32, key uint64) ([]float32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	id, ok := c.keys[key]
	if !ok {
		return dst[:0], false
	}
	v, _ := c.g.Lookup(id)
	return append(dst[:0], v...), true
}

// Keys appends every key to dst[:0] in ascending order.
func (c *Index) Keys(dst []uint64) []uint64 {
	c.mu.RLock()
	dst = dst[:0]
	for k := range c.keys {
		dst = append(dst, k)
	}
	c.mu.RUnlock()
	slices.Sort(dst)
	return dst
}

// MemoryBytes estimates the memory held: the vectors, and per node on each
// layer a map entry and a neighbour map of M pointers (about 48 bytes per
// entry in Go maps). It is an estimate; coder/hnsw does not report one.
func (c *Index) MemoryBytes() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := int64(len(c.keys) + c.dead)
	perNode := int64(c.dim)*4 + 48 + int64(c.g.M)*48
	// Upper layers hold about n/(M-1) nodes in all.
	return n*perNode + n/int64(max(c.g.M-1, 1))*(48+int64(c.g.M)*48)
}

// Bounds on parameters, the same as package index's (and so what a snapshot
// header may claim).
const (
	maxDim      = 1 << 16
	maxM        = 256
	defaultSeed = 0x6d6e656d6f // "mnemo", package index's default too
)

func validMetric(m index.Metric) bool {
	return m == index.Cosine || m == index.Dot || m == index.L2
}

// prepare copies vec into dst (reusing its storage) and normalises it under
// Cosine. vec must have passed index.CheckVector.
func prepare(dst, vec []float32, metric index.Metric) []float32 {
	dst = append(dst[:0], vec...)
	if metric == index.Cosine {
		simd.Normalize(dst)
	}
	return dst
}

// sortResults orders results by distance, then key, as package index does,
// so that equal distances come back in a deterministic order.
func sortResults(rs []index.Result) {
	slices.SortFunc(rs, func(a, b index.Result) int {
		if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
}
