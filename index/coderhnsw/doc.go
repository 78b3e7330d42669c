//go:build !windows

// Package coderhnsw wraps github.com/coder/hnsw v0.6.1 as an [index.Index],
// kept so that the benchmark harness (package bench, and `mnemo bench ann`)
// can compare it with the native HNSW of package index on the same data.
// It is not the default and its recall is low; see [Index] for why.
//
// It is a package of its own so that nothing else links coder/hnsw and its
// dependencies: package index and the engine never import it, the engine
// never creates a coder index, and [index.Read] does not recognise its
// snapshots: restore them with [Read].
//
// The package is not built on windows: coder/hnsw v0.6.1 saves graphs with
// github.com/google/renameio v1, which has no windows implementation, so
// the library itself does not compile there.
//
// # Snapshots
//
// [Index.WriteTo] writes the keys and vectors, and [Read] rebuilds the
// graph from them. Readers treat every byte as hostile: damage yields an
// error for which [index.IsCorruption] is true.
//
// The snapshot is package index's record format (that of its flat index)
// under a magic number of its own, all integers little-endian:
//
//	+-------------------------------------------------------------+
//	| magic (8): "MNEMOCDR"                                       |
//	| version u16 = 1 | metric u8 | reserved u8 = 0               |
//	| dim u32 | count u64 | M u32 | EfSearch u32                  |
//	| header CRC-32C u32 (of the bytes above)                     |
//	+-------------------------------------------------------------+
//	| count x ( key u64 | vector dim x f32 )                      |
//	+-------------------------------------------------------------+
//	| CRC-32C u32 of everything before it                         |
//	+-------------------------------------------------------------+
//
// Vectors are stored as the index holds them (normalised under Cosine).
// The reader checks the header checksum before trusting the header, adds
// records as they arrive (it never allocates for a claimed count), checks
// every vector as Add does, and verifies the trailing checksum.
package coderhnsw
