// Package index provides approximate and exact nearest-neighbour search over
// float32 vectors under uint64 keys, behind one interface, [Index], with
// two implementations:
//
//   - [HNSW], the native hierarchical navigable small world graph (Malkov &
//     Yashunin, 2018) and the default: sub-millisecond queries at high
//     recall, concurrent inserts, deletes and searches, snapshots that load
//     without rebuilding;
//   - [Flat], an exact scan: ground truth, small collections, and the plan
//     of choice for a filter that admits few keys.
//
// A third, a wrapper of github.com/coder/hnsw kept so that the benchmarks can
// compare its results with ours, lives in package index/coderhnsw, so that
// nothing that imports this package links that library.
//
// The package imports only the simd kernels. It knows nothing of disks,
// strings or metadata: callers pass dense keys and vectors, and a filter
// predicate on keys.
//
// # Metrics and distances
//
// [Cosine] normalises vectors once, on insert, and ranks by 1 - dot
// (distances in [0, 2]); [Dot] ranks by -dot; [L2] by the squared Euclidean
// distance. Smaller is nearer for all three. Add and Search validate their
// input at this boundary (dimension, finite components, a non-zero vector
// whose norm fits float32 under Cosine) and return errors wrapping
// [ErrDimension], [ErrNonFinite], [ErrZeroVector] and [ErrNormOverflow];
// nothing panics on user input.
//
// # The graph
//
// Each node gets a level with P(level >= l) = M^-l. Layer 0 holds every
// node with up to 2M links; upper layers up to M. An insert descends
// greedily to its level, then on each layer below runs a beam search of
// width efConstruction, keeps M neighbours chosen by the paper's heuristic
// (Algorithm 4) and offers each a link back, pruned by the same heuristic
// when the neighbour's list is full. A search descends greedily and runs a
// beam search of width max(ef, k) on layer 0, which stops when the nearest
// unexpanded candidate is farther than the farthest of the ef best.
//
// Storage is chunked and flat: each chunk holds, for a run of nodes, one
// []uint32 slab of records (the vector on a 64-byte boundary, then the flags
// and the layer-0 list, so a node's links and vector share cache lines), and
// the upper-layer lists of the few nodes that have them. Once an index holds
// 8 MB of records, its chunks are carved from 4-32 MB slabs advised for
// transparent huge pages on Linux (when the kernel gives them to advised
// memory only, and not under GODEBUG=disablethp=1), because a search's
// random reads over a large index otherwise miss the TLB as well as the
// cache. Keys map to dense uint32 ids. A search uses a pooled
// scratch (a visited bitset, two typed heaps) and allocates nothing when the
// caller supplies the result slice. Expanding a node gathers its unvisited
// neighbours and scores them all with one call of a row kernel
// (simd.DotRows, simd.L2SquaredRows), which prefetches the rows ahead of the
// one it scores; every distance the package computes goes through those
// kernels, so the graph walk, the exact plans and the flat index agree to
// the last bit. Lists are read and written with atomic loads and stores, so
// searches never block; writers to one node's list serialise on a striped
// lock.
//
// Every node stays reachable from the entry point on layer 0: each node
// but the entry point has an anchor, a node whose layer-0 list must keep a
// link to it through pruning, Compact and restores ([HNSW.Check] verifies
// it). Together with a search that also starts
// at the entry point, this makes a search whose ef covers the index exact,
// and a filtered search return min(k, admitted) results.
//
// # Exact plans and quantization
//
// [SearchOptions].Exact scores every live node (a chunk per kernel call)
// instead of walking the graph: exact, and for a small index the faster
// plan. [HNSWOptions].Quantize = [SQ8] keeps, beside each float32 vector,
// 8-bit codes on per-dimension ranges that the index learns from the
// vectors it holds (and learns again, re-encoding, as new vectors fall
// outside them). A search quantizes the query to signed
// bytes and walks every layer on integer inner products of the codes,
// which with the links are less than half of the float32 record's bytes,
// then re-ranks its ef candidates by float32 distance (below ef 2k, with
// the k candidates the walk displaced last). Construction, the
// exact plans and Vector use the float32 vectors.
//
// # Filters
//
// [SearchOptions].Filter is evaluated during the walk: rejected nodes are
// traversed but not returned, and the walk goes on until it holds ef
// admitted results, so a selective filter widens the search rather than
// returning fewer hits. When a filter admits few keys, passing them as
// [SearchOptions].Keys runs an exact scan over just those, which is both
// faster and exact; the engine chooses between the two plans.
//
// # Deletes
//
// Delete tombstones a node at once: it is never returned again, and it
// keeps routing searches, so recall does not drop. [HNSW.Compact] then
// repairs the graph beside searches and writes, a slice at a time under
// the shared lock (each node that linked to a tombstone gets a new list
// chosen from its live neighbours and theirs, hnswlib's repair, with a
// search only when those are too few, and links offered back), and
// releases the slots for reuse by Add. Replacing a key's vector is a
// delete and an insert.
//
// # Snapshots
//
// WriteTo writes a versioned, checksummed snapshot and [Read] restores
// either (the HNSW graph as it was, without rebuilding). Readers treat
// every byte as hostile: truncated, flipped or crafted input returns an
// error for which [IsCorruption] is true, never a panic, and no allocation
// is sized by an unchecked count.
//
// The snapshot of an [HNSW] (all integers little-endian):
//
//	+---------------------------------------------------------------+
//	| magic "MNEMOHNS" (8)                                          |
//	| version u16 = 2 | metric u8 | quantization u8                 |
//	| dim u32 | M u32 | efConstruction u32 | efSearch u32           |
//	| seed u64 | nodes u32 | entry u32 | entry level u32            |
//	| header CRC-32C u32 (of the bytes above)                       |
//	+---------------------------------------------------------------+
//	| node 0 .. nodes-1, each:                                      |
//	|   flags u8 (1 = tombstoned, 2 = released slot)                |
//	|   released slot: nothing more                                 |
//	|   otherwise: key u64 | level u8 | vector dim x f32           |
//	|     then for layer 0..level: count u32 | count x u32 ids     |
//	+---------------------------------------------------------------+
//	| CRC-32C u32 of every byte from the magic to the last node     |
//	+---------------------------------------------------------------+
//
// Version 1 had a reserved zero byte where version 2 has the quantization
// (0 none, 1 SQ8); the reader takes both. Codes are not stored: the writer
// and the reader both train the ranges on all the vectors and encode them,
// which gives the same codes. (Before per-dimension ranges, SQ8 codes had
// a scale per vector; a snapshot of that time loads to the new codes.)
//
// The reader treats every byte as hostile: it checks the header checksum
// before trusting a count, allocates storage a chunk at a time as node
// records actually arrive (never from a claimed count), checks every link
// and level, verifies the trailing checksum, and returns an error wrapping
// ErrCorrupt for anything wrong.
//
// The snapshot of a [Flat] index, the record format, keeps nothing but
// keys and vectors (little-endian):
//
//	+-------------------------------------------------------------+
//	| magic (8): "MNEMOFLT"                                       |
//	| version u16 = 1 | metric u8 | reserved u8 = 0               |
//	| dim u32 | count u64 | param1 u32 | param2 u32               |
//	| header CRC-32C u32                                          |
//	+-------------------------------------------------------------+
//	| count x ( key u64 | vector dim x f32 )                      |
//	+-------------------------------------------------------------+
//	| CRC-32C u32 of everything before it                         |
//	+-------------------------------------------------------------+
//
// param1 and param2 are backend parameters, zero for the flat index
// (package index/coderhnsw writes the same layout under "MNEMOCDR", with M
// and EfSearch there). Vectors are stored as the index holds them
// (normalised under Cosine).
//
// # Invariants
//
// [HNSW.Check] verifies the structure (links in range and to live or
// tombstoned nodes of sufficient level, degrees within bounds, the entry
// point on the top level, keys consistent, anchors linked, every live node
// reachable on layer 0). The tests run it after every mutation.
package index
