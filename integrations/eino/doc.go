// Package mnemo makes mnemo the indexer, retriever and embedder of Eino
// (github.com/cloudwego/eino) applications, on any mnemo backend: the
// embedded engine or PostgreSQL with pgvector. It is its own module,
// github.com/mnemodb/mnemo/integrations/eino, so that mnemo itself never
// requires Eino.
//
//	db, err := engine.OpenStore(dir, nil)        // or postgres.Open(ctx, dsn, nil)
//	idx, err := mnemo.NewIndexer(ctx, db, nil)   // the offline hashing embedder
//	ids, err := idx.Store(ctx, docs)
//	ret, err := mnemo.NewRetriever(ctx, db, nil)
//	docs, err := ret.Retrieve(ctx, "where does Paul work?", retriever.WithTopK(3),
//		retriever.WithScoreThreshold(0.2), mnemo.WithFilter(`{"source": "chat"}`))
//
// NewIndexer and NewRetriever build on a mnemo.Store the caller has open
// and leave it open (an indexer and a retriever usually share one).
//
// # Indexer and retriever
//
// Indexer implements indexer.Indexer and Retriever implements
// retriever.Retriever on collections of a mnemo.Store, through package
// vectorstore (memory/vectorstore), which the other framework
// integrations share. Both can be nodes of an Eino graph or chain.
//
//   - A document's ID is its record's ID (an empty one gets a UUID), so
//     storing a document again replaces it; its Content is embedded and
//     stored, its MetaData stored beside it.
//   - The collection is IndexerConfig.Collection / RetrieverConfig.Collection
//     (default DefaultCollection); indexer.WithSubIndexes stores into the
//     named collections instead, and retriever.WithSubIndex (or WithIndex)
//     retrieves from one.
//   - A retrieved document's score (Document.Score, Eino's "_score"
//     metadata) is the cosine similarity 1 - d, d the cosine distance in
//     [0, 2]. retriever.WithScoreThreshold keeps documents whose score is at
//     least the threshold, in [-1, 1].
//   - WithFilter carries a metadata filter in Chroma's where-syntax
//     ({"year": {"$gte": 2020}}, $and, $or, $in, ...): its JSON text, a
//     map[string]any or any Go value that encodes to it, or an
//     *mnemo.Filter (vectorstore.FilterOf).
//   - indexer.WithEmbedding and retriever.WithEmbedding replace the
//     embedder for one call; it must report a dimension and an identity,
//     which Eino's embedding.Embedder does not: pass an *Embedder or a
//     *ForeignEmbedder.
//
// Each collection records the identity of the embedder that made its
// vectors; using it with another is an error wrapping embed.ErrMismatch.
// It is marked as a vector store's (vectorstore.Kind): a sub-index named
// like another kind of memory's collection (a tool memory's, say) is
// refused with mnemo.ErrCollectionKind.
//
// # Embedders
//
// NewEmbedder gives Eino any mnemo embedder (its float32 vectors as Eino's
// float64); NewForeignEmbedder gives mnemo any Eino embedder, with the
// dimension and identity mnemo records.
package mnemo
