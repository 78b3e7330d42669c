// Package mnemo makes mnemo the indexer, retriever and embedder of Eino
// (github.com/cloudwego/eino) applications. It is its own module,
// github.com/mnemodb/mnemo/integrations/eino, so that mnemo itself never
// requires Eino.
//
//	db, err := engine.Open(dir, nil)
//	idx, err := mnemo.NewIndexer(ctx, db, nil) // the offline hashing embedder
//	ids, err := idx.Store(ctx, docs)
//	ret, err := mnemo.NewRetriever(ctx, db, nil)
//	docs, err := ret.Retrieve(ctx, "where does Paul work?", retriever.WithTopK(3),
//		retriever.WithScoreThreshold(0.2), mnemo.WithFilter(`{"source": "chat"}`))
//
// # Indexer and retriever
//
// Indexer implements indexer.Indexer and Retriever implements
// retriever.Retriever on engine collections. Both can be nodes of an Eino
// graph or chain.
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
//     ({"year": {"$gte": 2020}}, $and, $or, $in, ...), as mnemo.ParseFilter
//     reads it.
//   - indexer.WithEmbedding and retriever.WithEmbedding replace the
//     embedder for one call; it must report a dimension and an identity,
//     which Eino's embedding.Embedder does not: pass an *Embedder or a
//     *ForeignEmbedder.
//
// Each collection records the identity of the embedder that made its
// vectors; using it with another is an error wrapping embed.ErrMismatch.
//
// # Embedders
//
// NewEmbedder gives Eino any mnemo embedder (its float32 vectors as Eino's
// float64); NewForeignEmbedder gives mnemo any Eino embedder, with the
// dimension and identity mnemo records.
package mnemo
