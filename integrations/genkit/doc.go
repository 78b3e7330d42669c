// Package mnemo makes mnemo the vector store and embedder of Genkit
// (github.com/firebase/genkit/go) applications, on any mnemo backend: the
// embedded engine or PostgreSQL with pgvector. It is its own module,
// github.com/mnemodb/mnemo/integrations/genkit, so that mnemo itself never
// requires Genkit.
//
//	g := genkit.Init(ctx)
//	db, err := engine.OpenStore(dir, nil) // or postgres.Open(ctx, dsn, nil)
//	ds, ret, err := mnemo.DefineRetriever(ctx, g, db, "notes", nil, nil) // the offline hashing embedder
//	err = mnemo.Index(ctx, docs, ds)
//	resp, err := genkit.Retrieve(ctx, g, ai.WithRetriever(ret), ai.WithTextDocs("where does Paul work?"),
//		ai.WithConfig(&mnemo.RetrieverOptions{K: 3, Filter: `{"source": "chat"}`}))
//
// DefineRetriever builds on a mnemo.Store the caller has open and leaves
// it open; OpenRetriever opens an embedded database in a directory (in
// memory for "") and closes it with the DocStore.
//
// # Retriever and index
//
// DefineRetriever registers a retriever named "mnemo/NAME" with
// genkit.DefineRetriever and returns the DocStore behind it; Index adds
// documents to a DocStore, as Genkit's own vector store plugins (localvec,
// pinecone) do. A DocStore is a collection of a mnemo.Store, through
// package vectorstore (memory/vectorstore), which the other framework
// integrations share:
//
//   - a document's ID is the MD5 of its JSON encoding, so indexing the same
//     document twice stores it once; its text parts, joined, are embedded
//     and stored, its metadata beside them (documents with media parts are
//     refused);
//   - the documents live in a collection (Config.Collection, default
//     NAME) that records the embedder's identity: using it with another
//     embedder is an error wrapping embed.ErrMismatch; it is marked as a
//     vector store's (vectorstore.Kind), so another kind of memory's
//     collection of the same name is refused (mnemo.ErrCollectionKind);
//   - RetrieverOptions, passed with ai.WithConfig, sets the number of
//     documents (K), a minimum score, and a metadata filter in Chroma's
//     where-syntax ({"year": {"$gte": 2020}}, $and, $or, $in, ...; see
//     vectorstore.FilterOf);
//   - each retrieved document carries its score, the cosine similarity
//     1 - d (d the cosine distance, in [0, 2]), under the metadata key
//     ScoreKey.
//
// # Embedders
//
// DefineEmbedder registers any mnemo embedder (embed.Embedder: the offline
// hashing one, OpenAI-compatible or Ollama) as a Genkit embedder;
// NewForeignEmbedder gives mnemo any Genkit embedder, with the dimension
// (and identity) mnemo records.
package mnemo
