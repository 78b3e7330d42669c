package index

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mnemodb/mnemo/simd"
)

// HNSWOptions configure a native HNSW index. A zero field means its default.
type HNSWOptions struct {
	// M is the number of links a node keeps on the upper layers; layer 0
	// keeps 2*M. Default 16. Range 2..256.
	M int
	// EfConstruction is the candidate-list size used while inserting.
	// Default 200.
	EfConstruction int
	// EfSearch is the default candidate-list size of a search
	// (SearchOptions.Ef overrides it per search). Default 64.
	EfSearch int
	// Seed seeds the level generator. Zero means a fixed default seed, so
	// a single-goroutine build is reproducible.
	Seed uint64
	// Quantize selects what searches walk the graph on: NoQuantization
	// (the default), or SQ8 codes re-ranked with the float32 vectors.
	Quantize Quantization
}

// Defaults of HNSWOptions.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
	defaultSeed           = 0x6d6e656d6f // "mnemo"

	maxM     = 256
	maxLevel = 31 // levels are stored in a byte; 31 is beyond any real graph
	noNode   = math.MaxUint32
	emptyEP  = math.MaxUint64

	flagDeleted = 1 << 0 // tombstoned: routed through, never returned
	flagFree    = 1 << 1 // slot released by Compact, reusable by Add
	// flagRetired marks, beside flagDeleted, a tombstone that a running
	// Compact is about to release (compact.go). It sits above the byte
	// WriteTo stores, so a snapshot taken meanwhile holds a tombstone.
	flagRetired = 1 << 8

	lockStripes = 1 << 12
)

// withDefaults returns o with zero fields replaced by their defaults.
func (o *HNSWOptions) withDefaults() HNSWOptions {
	var r HNSWOptions
	if o != nil {
		r = *o
	}
	if r.M == 0 {
		r.M = DefaultM
	}
	if r.EfConstruction == 0 {
		r.EfConstruction = DefaultEfConstruction
	}
	if r.EfSearch == 0 {
		r.EfSearch = DefaultEfSearch
	}
	if r.Seed == 0 {
		r.Seed = defaultSeed
	}
	return r
}

// Validate reports every problem with the options at once. Zero fields are
// valid (they mean the defaults).
func (o *HNSWOptions) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	if o.M != 0 && (o.M < 2 || o.M > maxM) {
		errs = append(errs, fmt.Errorf("%w: M is %d, want 2..%d", ErrInvalidOptions, o.M, maxM))
	}
	if o.EfConstruction < 0 {
		errs = append(errs, fmt.Errorf("%w: EfConstruction is %d, want >= 1", ErrInvalidOptions, o.EfConstruction))
	}
	if o.EfSearch < 0 {
		errs = append(errs, fmt.Errorf("%w: EfSearch is %d, want >= 1", ErrInvalidOptions, o.EfSearch))
	}
	if !o.Quantize.valid() {
		errs = append(errs, fmt.Errorf("%w: unknown quantization %d", ErrInvalidOptions, o.Quantize))
	}
	return errors.Join(errs...)
}

// HNSW is a hierarchical navigable small world graph (Malkov & Yashunin,
// 2018) over float32 vectors. It is safe for concurrent use by multiple
// goroutines: searches run concurrently with each other and with Add and
// Delete, and Adds run in parallel, serialised only per node while a
// neighbour list is rewritten. Compact runs beside them, holding the
// index for itself only briefly (see Compact); WriteTo and Check take it
// for themselves and wait for operations in flight.
//
// Storage is chunked so that growth never moves a vector or a link: each
// chunk holds a run of nodes in one contiguous slab of records (a node's
// vector, then its flags word and its layer-0 neighbour list, a count and
// 2M slots; see recordWords), plus the upper-layer lists of the few nodes
// that have them.
// Neighbour lists are read and written with atomic loads and stores, so a
// search never blocks on an insert. The one exception is a small index's
// first chunk, which starts small and grows (see growFirst), under the
// exclusive lock, so that an index costs memory in proportion to its nodes.
//
// Lock order (a goroutine holding one may wait only for those after it):
//
//	compactMu -> mu -> epMu -> a node's writer lock (locks) -> adoptMu
//
// alloc, keys and rng are leaves: nothing of the index is taken while one
// is held (under alloc, a new slab may take the package's hugeOwners, a
// leaf too). A goroutine waits for one writer lock at a time. Against the
// order, locks are only tried, and a failed try gives up or moves on:
// adoptAnchor, holding a writer lock and adoptMu, tries epMu and other
// nodes' writer locks (striped: another node's may be the one it holds),
// and adoptStaying, holding adoptMu, tries epMu and writer locks. No
// goroutine takes mu again while it holds it, not even shared (an
// RLock waits behind a waiting Lock), so a search's Filter must not call
// the index. The caller's locks (the engine's) come before all of these.
type HNSW struct {
	dim    int
	metric Metric
	m, m0  int
	efC    int
	efS    int
	ml     float64
	seed   uint64
	quant  Quantization
	dpad   int // code row length under SQ8
	sq     sq8 // the ranges of the codes under SQ8
	stride int // words per node record in chunk.data, a multiple of 16
	// pairedMin is the node count from which queries walk layer 0 paired
	// (see searchLayer): pairedMin but in tests.
	pairedMin uint32

	chunkShift uint
	chunkMask  uint32

	// mu is held shared by Add (for the whole insert), Delete, Search,
	// Vector, MemoryBytes and each slice of Compact. It is held
	// exclusively by Check; WriteTo; retrain, the SQ8 retraining an Add
	// runs after its insert, once it has let go of its shared hold; an
	// Add whose slot lies past the end of a partial first chunk, to grow
	// it (lockSlot); and Compact, for its flag pass (retire), its first
	// slice of releases and, under SQ8, its training. Held exclusively, it
	// keeps every reader and writer of nodes out while the first chunk
	// moves, the writer locks are replaced or the SQ8 ranges change.
	// Len and Keys take only keys.
	mu sync.RWMutex

	chunks atomic.Pointer[[]chunkRef]
	nodes  atomic.Uint32 // slots handed out so far (ids < nodes exist)
	ep     atomic.Uint64 // entry point: level<<32 | id, or emptyEP

	// locks are the per-node writer locks, striped by id: a power of two
	// of them, as many as the first chunk has nodes up to lockStripes
	// (see stripes). Replaced only with the first chunk, under mu held
	// exclusively, when no Add or Compact holds one.
	locks []sync.Mutex

	// alloc protects the following fields.
	alloc struct {
		sync.Mutex
		free  []uint32 // slots released by Compact
		slabs slabs    // where new chunks' records and codes come from
	}
	nfree atomic.Int64 // len(alloc.free), read without the lock
	// keys protects the following fields.
	keys struct {
		sync.RWMutex
		m map[uint64]uint32 // caller key -> live node
	}
	// rng protects the level generator.
	rng struct {
		sync.Mutex
		r *rand.Rand
	}
	epMu       sync.Mutex // serialises entry-point promotion
	adoptMu    sync.Mutex // serialises adoptAnchor (link.go)
	deleted    atomic.Int64
	compactMu  sync.Mutex   // serialises Compacts
	retiring   atomic.Bool  // a Compact holds retired nodes (flagRetired)
	upperWords atomic.Int64 // words held by upper-layer lists, for MemoryBytes
	pool       sync.Pool    // *searcher
}

// chunkRef is an entry of the chunk table: a chunk and the starts of its
// record slab and (under SQ8) its code rows, so that the vector, the
// layer-0 list and the codes of a node are one load away from its id
// rather than two, through the chunk. Searches measured somewhat faster
// this way than through a table of *chunk (figures in
// docs/performance-notes.md).
type chunkRef struct {
	records unsafe.Pointer // &ch.data[0]
	codes   unsafe.Pointer // &ch.codes[0] under SQ8, else nil
	ch      *chunk
}

// chunk is the storage of 1<<chunkShift consecutive nodes, or of fewer
// when it is the first chunk of a small index (see growFirst): its
// capacity is len(keys).
type chunk struct {
	data   []uint32   // per node, stride words: vector, flags, layer-0 list (count, 2M slots), padding
	keys   []uint64   // caller key per node
	levels []uint8    // top layer per node
	anchor []uint32   // the node whose layer-0 list must keep this one (see link.go), atomic
	upper  [][]uint32 // per node: level*(m+1) words for layers 1..level
	codes  []uint8    // under SQ8, per node: codeLen(dim) codes
	cnorm  []float32  // under SQ8 and L2, per node: the decoded vector's squared norm about sq.center
}

// NewHNSW returns an empty HNSW index of dimension dim under metric. opts
// may be nil.
func NewHNSW(dim int, metric Metric, opts *HNSWOptions) (*HNSW, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: dimension %d, want 1..%d", ErrInvalidOptions, dim, maxDim)
	}
	if !metric.valid() {
		return nil, fmt.Errorf("%w: unknown metric %d", ErrInvalidOptions, metric)
	}
	o := opts.withDefaults()
	return newHNSW(dim, metric, o), nil
}

// maxDim bounds the dimension (and so what a snapshot header may claim).
const maxDim = 1 << 16

func newHNSW(dim int, metric Metric, o HNSWOptions) *HNSW {
	h := &HNSW{
		dim:    dim,
		metric: metric,
		m:      o.M,
		m0:     2 * o.M,
		efC:    o.EfConstruction,
		efS:    o.EfSearch,
		ml:     1 / math.Log(float64(o.M)),
		seed:   o.Seed,
		quant:  o.Quantize,
		dpad:   codeLen(dim),

		pairedMin: pairedMin,
	}
	h.stride = recordWords(dim, h.m0)
	// About 256 KiB of vectors per chunk, between 64 and 4096 nodes.
	per := max(64, min(4096, (256<<10)/(4*dim)))
	h.chunkShift = uint(bits.Len(uint(per)) - 1)
	h.chunkMask = 1<<h.chunkShift - 1
	h.chunks.Store(new([]chunkRef))
	h.locks = make([]sync.Mutex, h.stripes(h.firstChunkNodes()))
	h.ep.Store(emptyEP)
	h.keys.m = make(map[uint64]uint32)
	h.rng.r = rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	if h.quant == SQ8 {
		h.sq.lo, h.sq.step, h.sq.center = make([]float32, h.dpad), make([]float32, h.dpad), make([]float32, h.dpad)
	}
	return h
}

// Dim returns the dimension of the index.
func (h *HNSW) Dim() int { return h.dim }

// Metric returns the metric of the index.
func (h *HNSW) Metric() Metric { return h.metric }

// Options returns the parameters the index was built with.
func (h *HNSW) Options() HNSWOptions {
	return HNSWOptions{M: h.m, EfConstruction: h.efC, EfSearch: h.efS, Seed: h.seed, Quantize: h.quant}
}

// Len returns the number of live keys.
func (h *HNSW) Len() int {
	h.keys.RLock()
	defer h.keys.RUnlock()
	return len(h.keys.m)
}

// Deleted returns the number of tombstoned nodes that Compact would repair
// and release.
func (h *HNSW) Deleted() int { return int(h.deleted.Load()) }

// A small index's storage. Chunks are sized for indexes of many thousands
// of nodes (a chunk holds about 256 KiB of vectors, 64 to 4,096 nodes),
// but an agent may keep a collection per user or per session, most of them
// holding a handful of records, and a whole chunk each would make every
// one of them cost what a 64- to 4,096-node index does. So the first chunk
// of an index starts with room for about firstChunkBytes of records (one
// node at least) and doubles each time it fills, until it is a whole
// chunk; the chunks after it are whole from the start. A partial first
// chunk covers ids 0..len-1 of the id range of chunk 0, so a node's
// address is the same shift and mask as in a whole chunk and the search
// path does not change.
//
// Growing the first chunk moves its nodes, which chunks exist to avoid:
// it is done only under h.mu held exclusively (growFirst), when no search
// or insert is reading or writing them, and each doubling copies as much
// as all the ones before it together, so the copies cost O(1) amortised
// per node and a searcher waits at most for a copy of half a chunk. The
// writer locks grow with the first chunk for the same reason (stripes).
//
// Before, a one-record collection held a whole chunk and 4,096 writer
// locks from the start (the heap it took then, and takes now, is in
// docs/performance-notes.md); engine's TestCollectionFootprint keeps the
// cost in proportion to the records.
const firstChunkBytes = 4 << 10

// firstChunkNodes returns the capacity of a new index's first chunk: the
// largest power of two of records that fits in firstChunkBytes, at least
// one and at most a whole chunk.
func (h *HNSW) firstChunkNodes() int {
	n := max(1, firstChunkBytes/(4*h.stride))
	return min(1<<(bits.Len(uint(n))-1), 1<<h.chunkShift)
}

// stripes returns the number of writer locks of an index whose first
// chunk holds n nodes (a power of two): n, up to lockStripes, while the
// first chunk is partial, and lockStripes once it is whole, since the
// chunks after it are added under the shared lock and cannot replace the
// locks. Two nodes share a lock when their ids are equal modulo stripes.
func (h *HNSW) stripes(n int) int {
	if n >= 1<<h.chunkShift {
		return lockStripes
	}
	return min(n, lockStripes)
}

// newChunkRef returns a new chunk of n nodes and its table entry; h.alloc
// is held.
func (h *HNSW) newChunkRef(n int) chunkRef {
	ch := h.newChunk(n)
	r := chunkRef{records: unsafe.Pointer(unsafe.SliceData(ch.data)), ch: ch}
	if h.quant == SQ8 {
		r.codes = unsafe.Pointer(unsafe.SliceData(ch.codes))
	}
	return r
}

// newChunk returns a chunk of n nodes: 1<<chunkShift, or fewer for a
// partial first chunk, which is not carved from a slab (it is replaced as
// it grows, and a slab holds whole chunks).
func (h *HNSW) newChunk(n int) *chunk {
	data, code := n*h.stride, 0
	if h.quant == SQ8 {
		code = n * h.dpad / 4
	}
	ch := &chunk{
		keys:   make([]uint64, n),
		levels: make([]uint8, n),
		anchor: make([]uint32, n),
		upper:  make([][]uint32, n),
	}
	whole := n == 1<<h.chunkShift
	if whole {
		ch.data = h.alloc.slabs.words(data, data+code)
	} else {
		ch.data = alignedWords(data)
	}
	// A slot not yet initialised has no anchor (zero would read as node 0).
	for i := range ch.anchor {
		ch.anchor[i] = noNode
	}
	if h.quant == SQ8 {
		if whole {
			ch.codes = bytesOf(h.alloc.slabs.words(code, data+code))
		} else {
			ch.codes = bytesOf(alignedWords(code))
		}
		if h.metric == L2 {
			ch.cnorm = make([]float32, n)
		}
	}
	return ch
}

// growFirst replaces a full partial first chunk by one twice its size (a
// whole chunk at most) holding the same nodes, and the writer locks by as
// many as the new chunk calls for (see stripes). It does nothing if the
// first chunk has room or is whole. h.alloc is held, and h.mu exclusively
// (or h is owned outright, as by ReadHNSW): nodes move, and the locks are
// new. So nothing may keep a node's writer lock, or a pointer into a
// chunk, across a release of h.mu (Compact's slices take both anew).
func (h *HNSW) growFirst() {
	table := *h.chunks.Load()
	if len(table) != 1 {
		return
	}
	old := table[0].ch
	if len(old.keys) == 1<<h.chunkShift || int(h.nodes.Load()) < len(old.keys) {
		return
	}
	n := min(2*len(old.keys), 1<<h.chunkShift)
	r := h.newChunkRef(n)
	ch := r.ch
	copy(ch.data, old.data)
	copy(ch.keys, old.keys)
	copy(ch.levels, old.levels)
	copy(ch.anchor, old.anchor)
	copy(ch.upper, old.upper)
	copy(ch.codes, old.codes)
	copy(ch.cnorm, old.cnorm)
	h.chunks.Store(&[]chunkRef{r})
	if s := h.stripes(n); s != len(h.locks) {
		h.locks = make([]sync.Mutex, s)
	}
}

// recordWords is the number of words a node's record takes in chunk.data:
// its vector, then its flags and its layer-0 list (a count and 2M slots),
// the layout of hnswlib's level-0 memory with the vector first, padded to
// a multiple of 64 bytes (16 words):
//
//	word 0 .. dim-1             vector (float32 bits)                see vec
//	word dim                    flags (flagDeleted, flagFree, ...)   see flagWord
//	word dim+1                  layer-0 count n                      see links
//	word dim+2 .. dim+1+2M      layer-0 slots, the first n in use
//	word dim+2+2M .. stride-1   padding
//
// Chunks start on a 64-byte boundary, so every vector does too: a 128-d
// vector spans 8 cache lines instead of 9, and a 25-d one 2 instead of up
// to 3, which is what a search that misses the cache pays for. Expanding a
// node during a search reads its list, which sits right after the vector
// the search loaded when it scored the node, so it is usually still in
// cache.
func recordWords(dim, m0 int) int { return (dim + 2 + m0 + 15) &^ 15 }

// alignedWords returns n zeroed words starting on a 64-byte boundary.
func alignedWords(n int) []uint32 {
	buf := make([]uint32, n+15)
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf))) & 63 / 4)
	return buf[skip : skip+n : skip+n]
}

// ref returns the chunk table entry of node id.
func (h *HNSW) ref(id uint32) chunkRef { return (*h.chunks.Load())[id>>h.chunkShift] }

// loc returns the chunk of node id and the node's offset in it.
func (h *HNSW) loc(id uint32) (*chunk, uint32) { return h.ref(id).ch, id & h.chunkMask }

// record returns the start of node id's record in its chunk's slab (see
// recordWords): its vector, then its flags word and layer-0 list.
func (h *HNSW) record(id uint32) unsafe.Pointer {
	return unsafe.Add(h.ref(id).records, uintptr(id&h.chunkMask)*uintptr(h.stride)*4)
}

// vec returns the stored vector of node id.
func (h *HNSW) vec(id uint32) []float32 {
	return unsafe.Slice((*float32)(h.record(id)), h.dim)
}

// links returns the neighbour list of node id on layer: a count word and
// then the slots. Words must be accessed atomically.
func (h *HNSW) links(id uint32, layer int) []uint32 {
	if layer == 0 {
		return unsafe.Slice((*uint32)(unsafe.Add(h.record(id), (h.dim+1)*4)), h.m0+1)
	}
	ch, off := h.loc(id)
	lo := (layer - 1) * (h.m + 1)
	return ch.upper[off][lo : lo+h.m+1 : lo+h.m+1]
}

func (h *HNSW) level(id uint32) int {
	ch, off := h.loc(id)
	return int(ch.levels[off])
}

// flagWord returns the flags word of node id (flagDeleted, flagFree), which
// is accessed atomically.
func (h *HNSW) flagWord(id uint32) *uint32 {
	return (*uint32)(unsafe.Add(h.record(id), h.dim*4))
}

func (h *HNSW) flags(id uint32) uint32 { return atomic.LoadUint32(h.flagWord(id)) }

// prefetchLinks starts loading the neighbour list of node id on layer, all
// of its cache lines (a layer-0 list of M=16, a count and 32 slots, spans
// three).
func (h *HNSW) prefetchLinks(id uint32, layer int) {
	simd.Prefetch(floats(h.links(id, layer)))
}

func (h *HNSW) anchor(id uint32) *uint32 {
	ch, off := h.loc(id)
	return &ch.anchor[off]
}

func (h *HNSW) key(id uint32) uint64 {
	ch, off := h.loc(id)
	return ch.keys[off]
}

// lock returns the writer lock of node id; see stripes.
func (h *HNSW) lock(id uint32) *sync.Mutex { return &h.locks[id&uint32(len(h.locks)-1)] }

func (h *HNSW) maxLinks(layer int) int {
	if layer == 0 {
		return h.m0
	}
	return h.m
}

// distID returns the distance between two stored nodes.
func (h *HNSW) distID(a, b uint32) float32 { return distance(h.metric, h.vec(a), h.vec(b)) }

func packEP(id uint32, level int) uint64 { return uint64(level)<<32 | uint64(id) }

func unpackEP(ep uint64) (uint32, int) { return uint32(ep), int(ep >> 32) }

// randomLevel draws a level with P(level >= l) = M^-l (mL = 1/ln M).
func (h *HNSW) randomLevel() int {
	h.rng.Lock()
	u := h.rng.r.Float64()
	h.rng.Unlock()
	l := int(-math.Log(1-u) * h.ml)
	return min(l, maxLevel)
}

// allocSlot returns a node id for a new node, reusing a slot released by
// Compact when there is one and adding a chunk when the last one is full.
// The caller holds h.mu exclusively or owns h outright (ReadHNSW), since
// it may grow the first chunk; Add, which holds h.mu shared, allocates
// through lockSlot.
func (h *HNSW) allocSlot() (uint32, error) {
	h.alloc.Lock()
	defer h.alloc.Unlock()
	id, ok, err := h.takeSlot()
	if !ok && err == nil {
		h.growFirst()
		id, _, err = h.takeSlot()
	}
	return id, err
}

// lockSlot takes h.mu shared and allocates a slot, as allocSlot does; on
// success the lock stays held. When the slot would lie past the end of a
// partial first chunk, it lets go of the lock, grows the chunk under h.mu
// held exclusively and tries again (other Adds may fill the grown chunk
// first; a turn fails only while the first chunk is partial, so at most a
// dozen do).
func (h *HNSW) lockSlot() (uint32, error) {
	for {
		h.mu.RLock()
		h.alloc.Lock()
		id, ok, err := h.takeSlot()
		h.alloc.Unlock()
		if ok {
			return id, nil
		}
		h.mu.RUnlock()
		if err != nil {
			return 0, err
		}
		h.mu.Lock()
		h.alloc.Lock()
		h.growFirst()
		h.alloc.Unlock()
		h.mu.Unlock()
	}
}

// takeSlot is the work of allocSlot; h.alloc is held. It reports false
// and takes nothing when the next slot lies past the end of a partial
// first chunk, which only growFirst can make room for.
func (h *HNSW) takeSlot() (uint32, bool, error) {
	if n := len(h.alloc.free); n > 0 {
		id := h.alloc.free[n-1]
		h.alloc.free = h.alloc.free[:n-1]
		h.nfree.Add(-1)
		return id, true, nil
	}
	id := h.nodes.Load()
	if id == noNode-1 {
		return 0, false, fmt.Errorf("%w: index holds the maximum of %d nodes", ErrInvalidOptions, id)
	}
	table := *h.chunks.Load()
	switch c := int(id >> h.chunkShift); {
	case c >= len(table):
		n := 1 << h.chunkShift
		if c == 0 {
			n = h.firstChunkNodes()
		}
		grown := append(slices.Clip(table), h.newChunkRef(n))
		h.chunks.Store(&grown)
	case int(id&h.chunkMask) >= len(table[c].ch.keys):
		return 0, false, nil
	}
	// A slot counted in nodes but not yet initialised must not look live
	// to a scan of every node (scanAll): it is marked deleted until
	// initSlot clears its flags, after writing its key and vector.
	atomic.StoreUint32(h.flagWord(id), flagDeleted)
	h.nodes.Store(id + 1)
	return id, true, nil
}

// initSlot writes a node's key, vector and level before it is published.
func (h *HNSW) initSlot(id uint32, key uint64, vec []float32, level int) {
	ch, off := h.loc(id)
	ch.keys[off] = key
	ch.levels[off] = uint8(level)
	v := h.vec(id)
	copy(v, vec)
	if h.metric == Cosine {
		simd.Normalize(v)
	}
	if h.quant == SQ8 {
		h.encode(ch, off, v)
		h.sq.added.Add(1)
	}
	atomic.StoreUint32(&h.links(id, 0)[0], 0)
	atomic.StoreUint32(&ch.anchor[off], noNode)
	h.setUpper(ch, off, level)
	atomic.StoreUint32(h.flagWord(id), 0)
}

// setUpper gives a node the upper-layer lists of its level (none for level
// 0), releasing any it had.
func (h *HNSW) setUpper(ch *chunk, off uint32, level int) {
	h.upperWords.Add(-int64(len(ch.upper[off])))
	if level == 0 {
		ch.upper[off] = nil
		return
	}
	ch.upper[off] = make([]uint32, level*(h.m+1))
	h.upperWords.Add(int64(level * (h.m + 1)))
}

// Add stores vec under key, replacing the key's previous vector. The old
// node is tombstoned (see Delete) and the new one linked into the graph.
// Expected cost is O(efConstruction * M * log n) distance computations.
func (h *HNSW) Add(key uint64, vec []float32) error {
	if err := h.add(key, vec); err != nil {
		return err
	}
	if h.retrainDue() {
		h.retrain()
	}
	return nil
}

func (h *HNSW) add(key uint64, vec []float32) error {
	if err := CheckVector(vec, h.dim, h.metric); err != nil {
		return err
	}
	id, err := h.lockSlot()
	if err != nil {
		return err
	}
	defer h.mu.RUnlock()
	level := h.randomLevel()
	h.initSlot(id, key, vec, level)
	h.keys.Lock()
	if old, ok := h.keys.m[key]; ok {
		h.tombstone(old)
	}
	h.keys.m[key] = id
	h.keys.Unlock()
	h.link(id, level)
	return nil
}

// Delete removes key from the index and reports whether it was there. The
// node is tombstoned at once: searches never return it but still route
// through it, so recall does not drop. Compact relinks the neighbours of
// tombstoned nodes and releases their slots for reuse.
func (h *HNSW) Delete(key uint64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	h.keys.Lock()
	id, ok := h.keys.m[key]
	if ok {
		delete(h.keys.m, key)
		h.tombstone(id)
	}
	h.keys.Unlock()
	return ok
}

func (h *HNSW) tombstone(id uint32) {
	p := h.flagWord(id)
	for {
		f := atomic.LoadUint32(p)
		if f&flagDeleted != 0 || atomic.CompareAndSwapUint32(p, f, f|flagDeleted) {
			break
		}
	}
	h.deleted.Add(1)
}

// Vector appends the stored vector of key to dst[:0].
func (h *HNSW) Vector(dst []float32, key uint64) ([]float32, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	h.keys.RLock()
	id, ok := h.keys.m[key]
	h.keys.RUnlock()
	if !ok {
		return dst[:0], false
	}
	return append(dst[:0], h.vec(id)...), true
}

// Keys appends every live key to dst[:0] in ascending order.
func (h *HNSW) Keys(dst []uint64) []uint64 {
	h.keys.RLock()
	dst = dst[:0]
	for k := range h.keys.m {
		dst = append(dst, k)
	}
	h.keys.RUnlock()
	slices.Sort(dst)
	return dst
}

// MemoryBytes estimates the memory held by the index: chunks (vectors,
// links, keys, levels, flags, anchors, upper-layer lists), the unused
// part of the slabs chunks are carved from, the writer
// locks, the SQ8 ranges and the key map.
func (h *HNSW) MemoryBytes() int64 {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var b int64
	for _, r := range *h.chunks.Load() {
		ch := r.ch
		b += int64(len(ch.data))*4 + int64(len(ch.keys))*8 +
			int64(len(ch.levels)) + int64(len(ch.anchor))*4 + int64(len(ch.upper))*24 +
			int64(len(ch.codes)) + int64(len(ch.cnorm))*4
	}
	b += h.upperWords.Load() * 4
	b += int64(len(h.locks)) * int64(unsafe.Sizeof(sync.Mutex{}))
	b += int64(len(h.sq.lo)+len(h.sq.step)+len(h.sq.center)) * 4
	h.alloc.Lock()
	b += int64(len(h.alloc.slabs.rest)) * 4 // the current slab's unused tail
	h.alloc.Unlock()
	// A Go map of uint64 to uint32 costs about 12 bytes of payload plus
	// about 1.6x for buckets, control bytes and load factor.
	return b + int64(h.Len())*20
}
