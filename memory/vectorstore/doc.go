// Package vectorstore is a collection of texts embedded by an embedder, on
// any backend: what the vector stores, indexers and retrievers of the
// framework integrations (integrations/langchaingo, integrations/eino,
// integrations/genkit) share. Each integration translates its framework's
// documents, options and filters into this package's, and its results
// back; the embedding, the checks, the queries and the collections are
// done here, once.
//
//	db, err := engine.OpenStore(dir, nil)          // or postgres.Open(ctx, dsn, nil)
//	s, err := vectorstore.New(ctx, db, nil)         // the offline hashing embedder
//	ids, err := s.Add(ctx, []vectorstore.Doc{{Text: "Paul works at Google"}})
//	hits, err := s.Search(ctx, vectorstore.Search{Text: "where does Paul work?", K: 4})
//
// # Collections
//
// A Store works on one collection of a mnemo.Store (Options.Collection);
// Store.With gives a Store on another collection, or with another
// embedder, of the same database, as a framework's namespace, sub-index or
// per-call embedder asks. A collection is created by the first write to
// it, as a cosine collection of the embedder's dimension with a full-text
// index, marked with the embedder's identity and with the kind Kind; a
// search, count or delete in a collection nothing was written to finds
// nothing. Using a collection with another embedder than the one that
// made it is an error wrapping embed.ErrMismatch, and a collection of
// another kind of memory (a tool memory's, say) one wrapping
// mnemo.ErrCollectionKind. When another handle drops a collection, the
// next write creates it again.
//
// # Documents and vectors
//
// A Doc is a text, its metadata and an optional ID (an empty one gets a
// UUID). Add embeds the texts in batches of Options.BatchSize and stores
// them in one atomic write. Every text and every vector is checked first:
// empty text and text the embedder maps to the zero vector are ErrEmpty,
// invalid UTF-8 is ErrInvalid, and a vector of the wrong dimension, or
// holding a NaN or an infinity, is ErrEmbedding; a refused call stores
// nothing.
//
// # Search
//
// A Search is a query text, the number of hits k, an optional minimum
// score and a metadata filter. It is hybrid by default (the query's words,
// by BM25 over the collection's full-text index, fused with its
// embedding; vector alone on a collection without a full-text index), or
// vector or text alone (Search.Mode, Options.Mode). Whatever the mode, the
// query is embedded and every hit carries its cosine similarity 1 - d (d
// the cosine distance, in [0, 2]), which is the score the integrations
// report and the minimum score applies to (a hit exactly at it is kept).
// FilterOf translates a framework's filter value (Chroma's where-syntax,
// as JSON text, a map or any Go value that encodes to it) into a
// mnemo.Filter.
//
// # Embedders
//
// DefaultEmbedder gives the offline default when the caller names none.
// Foreign makes another framework's embedder an embed.Embedder: the
// framework's embedding function, with the dimension and identity that
// mnemo records and the framework's interface does not report; its
// vectors are checked (ErrEmbedding). AsEmbedder accepts a framework
// embedder passed for one call only when it says its dimension and
// identity (ErrNoIdentity). An embedder that embeds queries differently
// from documents implements QueryEmbedder.
//
// # Concurrency
//
// A Store, and every Store With returns, is safe for concurrent use by
// multiple goroutines; so is a Foreign when the function it wraps is.
// Search and Doc are plain values.
package vectorstore
