package index

import (
	"bytes"
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
// data. It is not the default, and its recall is low: measured on this
// project's synthetic sets it reaches a recall@10 of about 0.07 on 100k x
// 128 and 0.26-0.30 on 10k vectors whatever its EfSearch, because in v0.6.1
// the max-heap used for results is a min-heap (its Max is not the maximum),
// the result set is capped at k rather than ef, the layer search stops at the
// first hop that does not improve, there is no efConstruction nor neighbour
// heuristic, and every search allocates a map. We wrap it without patching
// it.
//
// The library has no filtered search: Filter is applied to an over-fetched
// result (k, then 4k, 16k, ... candidates) and so may return fewer than k
// hits under a selective filter. Keys is served by an exact scan. It is safe
// for concurrent use by multiple goroutines (the graph itself is not; a lock
// serialises writes and searches with a non-default Ef).
type Coder struct {
	dim    int
	metric Metric

	// mu protects the following fields.
	mu   sync.RWMutex
	g    *hnsw.Graph[uint64]
	keys map[uint64]struct{}
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
	return &Coder{dim: dim, metric: metric, g: g, keys: make(map[uint64]struct{})}, nil
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

// Add stores vec under key, replacing its previous vector.
func (c *Coder) Add(key uint64, vec []float32) error {
	if err := checkVector(vec, c.dim, c.metric); err != nil {
		return err
	}
	v := prepare(nil, vec, c.metric)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.keys[key]; ok {
		// v0.6.1 keeps stale neighbour state on replace; delete first.
		c.g.Delete(key)
	}
	c.g.Add(hnsw.MakeNode(key, v))
	c.keys[key] = struct{}{}
	return nil
}

// Delete removes key.
func (c *Coder) Delete(key uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.keys[key]; !ok {
		return false
	}
	delete(c.keys, key)
	c.g.Delete(key)
	return true
}

// Search returns up to k nearest keys found by coder/hnsw, nearest first.
func (c *Coder) Search(dst []Result, q []float32, k int, opts *SearchOptions) ([]Result, error) {
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
	if o.Ef != 0 && o.Ef != c.g.EfSearch {
		c.mu.Lock()
		defer c.mu.Unlock()
		saved := c.g.EfSearch
		c.g.EfSearch = o.Ef
		defer func() { c.g.EfSearch = saved }()
	} else {
		c.mu.RLock()
		defer c.mu.RUnlock()
	}
	if len(c.keys) == 0 {
		return dst, nil
	}
	for fetch := k; ; fetch *= 4 {
		dst = dst[:0]
		for _, n := range c.g.Search(qq, fetch) {
			if o.Filter == nil || o.Filter(n.Key) {
				dst = append(dst, Result{Key: n.Key, Distance: c.g.Distance(qq, n.Value)})
			}
		}
		if len(dst) >= k || o.Filter == nil || fetch >= len(c.keys) {
			break
		}
	}
	sortResults(dst)
	if len(dst) > k {
		dst = dst[:k]
	}
	return dst, nil
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
		if v, ok := c.g.Lookup(key); ok {
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
	if _, ok := c.keys[key]; !ok {
		return dst[:0], false
	}
	v, _ := c.g.Lookup(key)
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
	n := int64(len(c.keys))
	perNode := int64(c.dim)*4 + 48 + int64(c.g.M)*48
	// Upper layers hold about n/(M-1) nodes in all.
	return n*perNode + n/int64(max(c.g.M-1, 1))*(48+int64(c.g.M)*48)
}

// Snapshot format of the coder backend (little-endian):
//
//	| magic "MNEMOCDR" (8) | version u16 = 1 | metric u8 | 0 u8 | dim u32 |
//	| key count u64 | payload length u64 | header CRC-32C u32 |
//	| key count x key u64 (coder/hnsw cannot list its keys) |
//	| payload: coder/hnsw Graph.Export bytes |
//	| CRC-32C u32 of everything before it |

var coderMagic = [8]byte{'M', 'N', 'E', 'M', 'O', 'C', 'D', 'R'}

const coderVersion = 1

// WriteTo writes a snapshot of the index to w.
func (c *Coder) WriteTo(w io.Writer) (int64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var payload bytes.Buffer
	if err := c.g.Export(&payload); err != nil {
		return 0, fmt.Errorf("coder export: %w", err)
	}
	cw := newCRCWriter(w)
	cw.write(coderMagic[:])
	cw.write([]byte{coderVersion, 0, byte(c.metric), 0})
	cw.u32(uint32(c.dim))
	cw.u64(uint64(len(c.keys)))
	cw.u64(uint64(payload.Len()))
	cw.u32(cw.crc.Sum32())
	for k := range c.keys {
		cw.u64(k)
	}
	cw.write(payload.Bytes())
	return cw.finish()
}

// ReadCoder restores a coder/hnsw index from a snapshot written by WriteTo.
// The payload is read in full and checksummed before coder/hnsw decodes it;
// a panic inside its decoder is reported as corruption.
func ReadCoder(r io.Reader) (_ *Coder, err error) {
	cr := newCRCReader(r)
	var magic [8]byte
	cr.read(magic[:])
	var vb [4]byte
	cr.read(vb[:])
	dim := cr.u32()
	count, size := cr.u64(), cr.u64()
	if err := cr.checksum("header"); err != nil {
		return nil, err
	}
	switch {
	case count >= noNode || size > math.MaxInt64:
		return nil, corruptf("key count %d, payload size %d", count, size)
	case magic != coderMagic:
		return nil, corruptf("not a coder snapshot (magic %q)", magic[:])
	case vb[0] != coderVersion || vb[1] != 0:
		return nil, corruptf("unsupported coder snapshot version %d", vb[0])
	case !Metric(vb[2]).valid():
		return nil, corruptf("unknown metric %d", vb[2])
	case dim == 0 || dim > maxDim:
		return nil, corruptf("dimension %d out of range", dim)
	}
	var keys []uint64 // grows as keys arrive, never from the claimed count
	for i := uint64(0); i < count; i++ {
		keys = append(keys, cr.u64())
		if err := cr.errAt(uint32(i)); err != nil {
			return nil, err
		}
	}
	var payload bytes.Buffer
	if _, err := io.CopyN(&payload, cr.r, int64(size)); err != nil {
		return nil, corruptf("read payload: %v", err)
	}
	cr.crc.Write(payload.Bytes())
	if err := cr.checksum("snapshot"); err != nil {
		return nil, err
	}
	c, err := NewCoder(int(dim), Metric(vb[2]), nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, corruptf("coder/hnsw import panicked: %v", p)
		}
	}()
	if err := c.g.Import(&payload); err != nil {
		return nil, corruptf("coder import: %v", err)
	}
	c.g.Distance = coderDistance(c.metric)
	if c.g.Len() != len(keys) {
		return nil, corruptf("%d keys listed, graph holds %d", len(keys), c.g.Len())
	}
	for _, key := range keys {
		v, ok := c.g.Lookup(key)
		if !ok {
			return nil, corruptf("key %d listed but not in the graph", key)
		}
		if err := checkVector(v, c.dim, c.metric); err != nil {
			return nil, corruptf("key %d: %v", key, err)
		}
		c.keys[key] = struct{}{}
	}
	return c, nil
}
