package index

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/mnemodb/mnemo/simd"
)

// Flat is an exact index: a search computes the distance to every stored
// vector, O(n * dim), with the one-to-many kernels over one contiguous
// arena. It is the ground truth for the approximate indexes, and the right
// choice for small collections and for scans of a few admitted keys. It is
// safe for concurrent use by multiple goroutines: searches share a read
// lock, writes take it exclusively.
type Flat struct {
	dim    int
	metric Metric

	// mu protects the following fields.
	mu   sync.RWMutex
	keys []uint64          // row -> key
	vecs []float32         // row-major arena, dim floats per row
	rows map[uint64]uint32 // key -> row

	pool sync.Pool // *flatScratch
}

type flatScratch struct {
	q     []float32
	dists []float32
	rows  [][]float32
	res   minHeap  // nearest rows so far, negated distances
	seen  []uint32 // epoch-stamped rows, for deduplicating Keys
	epoch uint32
}

// NewFlat returns an empty exact index of dimension dim under metric.
func NewFlat(dim int, metric Metric) (*Flat, error) {
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: dimension %d, want 1..%d", ErrInvalidOptions, dim, maxDim)
	}
	if !metric.valid() {
		return nil, fmt.Errorf("%w: unknown metric %d", ErrInvalidOptions, metric)
	}
	return &Flat{dim: dim, metric: metric, rows: make(map[uint64]uint32)}, nil
}

// Dim returns the dimension of the index.
func (f *Flat) Dim() int { return f.dim }

// Metric returns the metric of the index.
func (f *Flat) Metric() Metric { return f.metric }

// Len returns the number of keys.
func (f *Flat) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.keys)
}

// Add stores vec under key, replacing its previous vector. O(dim).
func (f *Flat) Add(key uint64, vec []float32) error {
	if err := CheckVector(vec, f.dim, f.metric); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.rows[key]
	if !ok {
		r = uint32(len(f.keys))
		f.rows[key] = r
		f.keys = append(f.keys, key)
		f.vecs = append(f.vecs, vec...)
	}
	row := f.vecs[int(r)*f.dim : int(r+1)*f.dim]
	copy(row, vec)
	if f.metric == Cosine {
		simd.Normalize(row)
	}
	return nil
}

// Delete removes key, moving the last row into its place. O(dim).
func (f *Flat) Delete(key uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.rows[key]
	if !ok {
		return false
	}
	last := uint32(len(f.keys) - 1)
	if r != last {
		moved := f.keys[last]
		f.keys[r] = moved
		f.rows[moved] = r
		copy(f.vecs[int(r)*f.dim:int(r+1)*f.dim], f.vecs[int(last)*f.dim:])
	}
	delete(f.rows, key)
	f.keys = f.keys[:last]
	f.vecs = f.vecs[:int(last)*f.dim]
	return true
}

// Search returns the exact k nearest keys to q, nearest first: O(n * dim)
// distance work plus O(n log k) selection, or O(len(Keys) * dim) with
// SearchOptions.Keys. Filter applies; Ef is ignored. The filter runs under
// the index's read lock and must not call back into the index.
func (f *Flat) Search(dst []Result, q []float32, k int, opts *SearchOptions) ([]Result, error) {
	dst = dst[:0]
	if err := CheckVector(q, f.dim, f.metric); err != nil {
		return dst, err
	}
	if k <= 0 {
		return dst, nil
	}
	var o SearchOptions
	if opts != nil {
		o = *opts
	}
	s, _ := f.pool.Get().(*flatScratch)
	if s == nil {
		s = &flatScratch{}
	}
	defer f.pool.Put(s)
	s.q = prepare(s.q, q, f.metric)
	s.res = s.res[:0]
	f.mu.RLock()
	defer f.mu.RUnlock()
	if o.Keys != nil {
		f.scanKeys(s, k, o.Keys, o.Filter)
	} else {
		f.scanAll(s, k, o.Filter)
	}
	for len(s.res) > 0 {
		it := s.res.pop()
		dst = append(dst, Result{Key: f.keys[it.id], Distance: -it.dist})
	}
	sortResults(dst)
	return dst, nil
}

// flatBlock is how many rows scanAll scores per row-kernel call.
const flatBlock = 256

// scanAll scores every row, a block of rows per row-kernel call.
func (f *Flat) scanAll(s *flatScratch, k int, filter func(uint64) bool) {
	n := len(f.keys)
	if cap(s.dists) < flatBlock {
		s.dists = make([]float32, flatBlock)
		s.rows = make([][]float32, flatBlock)
	}
	for lo := 0; lo < n; lo += flatBlock {
		hi := min(n, lo+flatBlock)
		rows, d := s.rows[:hi-lo], s.dists[:hi-lo]
		for i := range rows {
			r := lo + i
			rows[i] = f.vecs[r*f.dim : (r+1)*f.dim : (r+1)*f.dim]
		}
		scoreRows(d, f.metric, s.q, rows)
		for i, dist := range d {
			if r := lo + i; filter == nil || filter(f.keys[r]) {
				s.res.offer(k, dist, uint32(r))
			}
		}
	}
	clear(s.rows) // hold no reference to the arena between searches
}

// scanKeys scores the rows of the listed keys, each once.
func (f *Flat) scanKeys(s *flatScratch, k int, keys []uint64, filter func(uint64) bool) {
	if cap(s.seen) < len(f.keys) {
		s.seen = make([]uint32, len(f.keys)+len(f.keys)/4)
	}
	s.seen = s.seen[:len(f.keys)]
	if s.epoch++; s.epoch == 0 {
		clear(s.seen)
		s.epoch = 1
	}
	for _, key := range keys {
		r, ok := f.rows[key]
		if !ok || s.seen[r] == s.epoch || (filter != nil && !filter(key)) {
			continue
		}
		s.seen[r] = s.epoch
		s.res.offer(k, distance(f.metric, s.q, f.vecs[int(r)*f.dim:int(r+1)*f.dim]), r)
	}
}

// Vector appends the stored vector of key to dst[:0].
func (f *Flat) Vector(dst []float32, key uint64) ([]float32, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	r, ok := f.rows[key]
	if !ok {
		return dst[:0], false
	}
	return append(dst[:0], f.vecs[int(r)*f.dim:int(r+1)*f.dim]...), true
}

// Keys appends every key to dst[:0] in ascending order.
func (f *Flat) Keys(dst []uint64) []uint64 {
	f.mu.RLock()
	dst = append(dst[:0], f.keys...)
	f.mu.RUnlock()
	slices.Sort(dst)
	return dst
}

// MemoryBytes estimates the memory held by the index.
func (f *Flat) MemoryBytes() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return int64(cap(f.vecs))*4 + int64(cap(f.keys))*8 + int64(len(f.rows))*20
}

// WriteTo writes a snapshot of the index to w in the record format (drawn
// in the package doc): the keys and vectors, versioned and checksummed,
// which Read restores.
func (f *Flat) WriteTo(w io.Writer) (int64, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	hdr := recordsHeader{magic: flatMagic, metric: f.metric, dim: f.dim, count: len(f.keys)}
	return writeRecords(w, hdr, func(yield func(uint64, []float32)) {
		for r, key := range f.keys {
			yield(key, f.vecs[r*f.dim:(r+1)*f.dim])
		}
	})
}

// ReadFlat restores a flat index from a snapshot written by WriteTo.
// Damage is reported as an error wrapping ErrCorrupt.
func ReadFlat(r io.Reader) (*Flat, error) {
	var f *Flat
	_, err := readRecords(r, flatMagic, func(hdr recordsHeader) error {
		var err error
		f, err = NewFlat(hdr.dim, hdr.metric)
		return err
	}, func(key uint64, vec []float32) error {
		if _, dup := f.rows[key]; dup {
			return corruptf("key %d stored twice", key)
		}
		f.rows[key] = uint32(len(f.keys))
		f.keys = append(f.keys, key)
		f.vecs = append(f.vecs, vec...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}
