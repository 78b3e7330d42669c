// Package retrieval measures how well mnemo finds what was said: evidence
// recall on LoCoMo conversations and nDCG on the Cranfield collection, for
// any method that ranks stored texts for a query (the engine's BM25,
// vector and hybrid queries, the memory adapters' default paths, other
// backends).
//
// The data sets are not part of the module; the loaders take their
// directory (see the repository's README for where they come from) and
// report ErrNoData when it is absent, so benchmarks skip.
package retrieval
