// Package mnemo makes mnemo the vector store, the embedder and the chat
// history of langchaingo (github.com/tmc/langchaingo) programs, on any
// mnemo backend: the embedded engine or PostgreSQL with pgvector. It is
// its own module, github.com/mnemodb/mnemo/integrations/langchaingo, so
// that mnemo itself never requires langchaingo.
//
//	db, err := engine.OpenStore(dir, nil)        // or postgres.Open(ctx, dsn, nil)
//	store, err := mnemo.NewStore(ctx, db, nil)   // the offline hashing embedder
//	ids, err := store.AddDocuments(ctx, docs)
//	docs, err := store.SimilaritySearch(ctx, "where does Paul work?", 4,
//		vectorstores.WithScoreThreshold(0.2),
//		vectorstores.WithFilters(map[string]any{"source": "chat"}))
//	history, err := mnemo.NewHistory(ctx, db, "session-1", nil)
//
// NewStore and NewHistory build on a mnemo.Store the caller has open and
// leave it open; OpenStore and OpenHistory open an embedded database in a
// directory (in memory for "") and close it with the Store or History.
//
// # Vector store
//
// Store implements vectorstores.VectorStore on collections of a
// mnemo.Store, through package vectorstore (memory/vectorstore), which the
// other framework integrations share:
//
//   - a namespace (vectorstores.WithNameSpace) is a collection of its own,
//     created on the first AddDocuments; Options.Collection is the default;
//   - Document.Score is the cosine similarity 1 - d (d the cosine distance,
//     in [0, 2]), as langchaingo's Chroma store reports it;
//   - vectorstores.WithScoreThreshold keeps hits whose score is at least the
//     threshold, in [0, 1] (0 means none);
//   - vectorstores.WithFilters takes Chroma's where-syntax
//     ({"year": {"$gte": 2020}}, $and, $or, $in, ...): a map[string]any
//     or any Go value that encodes to such a JSON object, its JSON text as a
//     string, or an *mnemo.Filter (vectorstore.FilterOf);
//   - vectorstores.WithEmbedder replaces the store's embedder for one call.
//     It must carry a dimension and an identity, which langchaingo's
//     embeddings.Embedder lacks: pass an *Embedder or a *ForeignEmbedder.
//
// Each collection records the identity of the embedder that made its
// vectors; using it with another is an error wrapping embed.ErrMismatch.
// It is marked as a vector store's (vectorstore.Kind): a namespace named
// like another kind of memory's collection (a tool memory's, say) is
// refused with mnemo.ErrCollectionKind.
//
// # Embedders
//
// NewEmbedder gives langchaingo any mnemo embedder (embed.Embedder: the
// offline hashing one, OpenAI-compatible or Ollama); NewForeignEmbedder
// gives mnemo any langchaingo embedder, with the dimension and identity
// mnemo records.
//
// # Chat history
//
// History implements schema.ChatMessageHistory on a stored window
// (window.NewStored): messages persist in the database and survive a
// restart, and History.Window gives the token-budgeted context of the same
// conversation.
package mnemo
