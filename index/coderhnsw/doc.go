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
// [Index.WriteTo] writes the keys and vectors in the record format of the
// flat index, under its own magic number, and
// [Read] rebuilds the graph from them. Readers treat every byte as hostile:
// damage yields an error for which [index.IsCorruption] is true.
package coderhnsw
