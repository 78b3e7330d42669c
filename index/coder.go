package index

import (
	"fmt"
	"io"
	"math"
	mrand "math/rand"
	"slices"
	"sync"

	"github.com/coder/hnsw"
	"github.com/mnemodb/mnemo/simd"
)

// Coder is an Index backed by github.com/coder/hnsw v0.6.1, kept so users
// and the benchmark harness can compare it with the native HNSW on the same
// data. It is not the default, and its recall is low: measured with this
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
// and their memory is reclaimed only when the index is rebuilt (ReadCoder
// rebuilds from the live records). The library has no filtered search
// either: Filter and tombstones are applied to an over-fetched result (k,
// then 4k, 16k, ... candidates). Keys is served by an exact scan. A panic
// inside the library is returned as an error. Coder is safe for concurrent
// use by multiple goroutines (the graph itself is not; a lock serialises
// writes, and searches with a non-default Ef).
type Coder struct {
	dim      int
	metric   Metric
	efSearch int // the graph's EfSearch between searches

	// mu protects the following fields.
	mu     sync.RWMutex
	g      *hnsw.Graph[uint64] // over internal ids
	keys   map[uint64]uint64   // caller key -> live internal id
	owners map[uint64]uint64   // internal id -> caller key, tombstones included
	dead   int                 // tombstoned internal ids
	nextID uint64
}

// CoderOptions configure a Coder index. A zero field means its default.
type CoderOptions struct {
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

// NewCoder returns an empty coder/hnsw index of dimension dim under metric.
func NewCoder(dim int, metric Metric, opts *CoderOptions) (*Coder, error) {
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: dimension %d, want 1..%d", ErrInvalidOptions, dim, maxDim)
	}
	if !metric.valid() {
		return nil, fmt.Errorf("%w: unknown metric %d", ErrInvalidOptions, metric)
	}
	var o CoderOptions
	if opts != nil {
		o = *opts
	}
	if o.M < 0 || o.M > maxM || o.EfSearch < 0 {
		return nil, fmt.Errorf("%w: M %d, EfSearch %d", ErrInvalidOptions, o.M, o.EfSearch)
	}
	g := hnsw.NewGraph[uint64]()
	if o.M != 0 {
		g.M = o.M
	}
	g.Ml = 1 / math.Log(float64(max(g.M, 2)))
	g.EfSearch = DefaultEfSearch
	if o.EfSearch != 0 {
		g.EfSearch = o.EfSearch
	}
	seed := o.Seed
	if seed == 0 {
		seed = defaultSeed
	}
	g.Rng = newMathRand(seed)
	g.Distance = coderDistance(metric)
	return &Coder{dim: dim, metric: metric, efSearch: g.EfSearch, g: g, keys: make(map[uint64]uint64), owners: make(map[uint64]uint64)}, nil
}

// newMathRand returns the math/rand generator coder/hnsw takes.
func newMathRand(seed uint64) *mrand.Rand { return mrand.New(mrand.NewSource(int64(seed))) }

func coderDistance(m Metric) hnsw.DistanceFunc {
	switch m {
	case L2:
		return simd.L2Squared
	case Dot:
		return func(a, b []float32) float32 { return -simd.Dot(a, b) }
	}
	return func(a, b []float32) float32 { return 1 - simd.Dot(a, b) }
}

// Dim returns the dimension of the index.
func (c *Coder) Dim() int { return c.dim }

// Metric returns the metric of the index.
func (c *Coder) Metric() Metric { return c.metric }

// Len returns the number of keys.
func (c *Coder) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.keys)
}

// Add stores vec under key, replacing (tombstoning) its previous vector.
func (c *Coder) Add(key uint64, vec []float32) (err error) {
	if err := checkVector(vec, c.dim, c.metric); err != nil {
		return err
	}
	return c.addPrepared(key, prepare(nil, vec, c.metric))
}

// addPrepared adds a vector that is already validated and normalised; v is
// retained.
func (c *Coder) addPrepared(key uint64, v []float32) (err error) {
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
		*err = fmt.Errorf("index: coder/hnsw panicked: %v", p)
	}
}

// Delete removes key (a tombstone; see the type's doc).
func (c *Coder) Delete(key uint64) bool {
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
func (c *Coder) Search(dst []Result, q []float32, k int, opts *SearchOptions) (_ []Result, err error) {
	dst = dst[:0]
	if err := checkVector(q, c.dim, c.metric); err != nil {
		return dst, err
	}
	var o SearchOptions
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
				dst = append(dst, Result{Key: key, Distance: c.g.Distance(qq, n.Value)})
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
func (c *Coder) liveKey(id uint64) (uint64, bool) {
	key, ok := c.owners[id]
	return key, ok && key != tombstoneOwner && c.keys[key] == id
}

func (c *Coder) scanKeys(dst []Result, q []float32, k int, keys []uint64, filter func(uint64) bool) []Result {
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
			dst = append(dst, Result{Key: key, Distance: c.g.Distance(q, v)})
		}
	}
	sortResults(dst)
	if len(dst) > k {
		dst = dst[:k]
	}
	return dst
}

// Vector appends the stored vector of key to dst[:0].
func (c *Coder) Vector(dst []float32, key uint64) ([]float32, bool) {
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
func (c *Coder) Keys(dst []uint64) []uint64 {
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
func (c *Coder) MemoryBytes() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := int64(len(c.keys) + c.dead)
	perNode := int64(c.dim)*4 + 48 + int64(c.g.M)*48
	// Upper layers hold about n/(M-1) nodes in all.
	return n*perNode + n/int64(max(c.g.M-1, 1))*(48+int64(c.g.M)*48)
}

// WriteTo writes a snapshot of the index to w in the record format (see
// records.go): the keys and vectors, and the parameters. coder/hnsw's own
// Export is not used: after deletions v0.6.1 exports neighbour references to
// removed nodes, and a graph imported from such an export panics in Search.
// ReadCoder therefore rebuilds the graph.
func (c *Coder) WriteTo(w io.Writer) (int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]uint64, 0, len(c.keys))
	for k := range c.keys {
		keys = append(keys, k)
	}
	slices.Sort(keys) // rebuilt in key order, so a reload is deterministic
	hdr := recordsHeader{magic: coderMagic, metric: c.metric, dim: c.dim, count: len(keys),
		param1: uint32(c.g.M), param2: uint32(c.efSearch)}
	return writeRecords(w, hdr, func(yield func(uint64, []float32)) {
		for _, k := range keys {
			v, _ := c.g.Lookup(c.keys[k])
			yield(k, v)
		}
	})
}

// ReadCoder restores a coder/hnsw index from a snapshot written by WriteTo,
// rebuilding its graph (see WriteTo). Damage is reported as an error
// wrapping ErrCorrupt.
func ReadCoder(r io.Reader) (*Coder, error) {
	var c *Coder
	_, err := readRecords(r, coderMagic, func(hdr recordsHeader) error {
		if hdr.param1 < 2 || hdr.param1 > maxM || hdr.param2 == 0 || hdr.param2 > 1<<20 {
			return corruptf("bad parameters M=%d EfSearch=%d", hdr.param1, hdr.param2)
		}
		var err error
		c, err = NewCoder(hdr.dim, hdr.metric, &CoderOptions{M: int(hdr.param1), EfSearch: int(hdr.param2)})
		return err
	}, func(key uint64, vec []float32) error {
		if _, dup := c.keys[key]; dup {
			return corruptf("key %d stored twice", key)
		}
		return c.addPrepared(key, slices.Clone(vec))
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}
