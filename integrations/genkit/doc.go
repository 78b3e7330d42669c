// Package mnemo makes mnemo the vector store and embedder of Genkit
// (github.com/firebase/genkit/go) applications. It is its own module,
// github.com/mnemodb/mnemo/integrations/genkit, so that mnemo itself never
// requires Genkit.
//
//	g := genkit.Init(ctx)
//	db, err := engine.Open(dir, nil)
//	ds, ret, err := mnemo.DefineRetriever(g, db, "notes", nil, nil) // the offline hashing embedder
//	err = mnemo.Index(ctx, docs, ds)
//	resp, err := genkit.Retrieve(ctx, g, ai.WithRetriever(ret), ai.WithTextDocs("where does Paul work?"),
//		ai.WithConfig(&mnemo.RetrieverOptions{K: 3, Filter: `{"source": "chat"}`}))
//
// # Retriever and index
//
// DefineRetriever registers a retriever named "mnemo/NAME" with
// genkit.DefineRetriever and returns the DocStore behind it; Index adds
// documents to a DocStore, as Genkit's own vector store plugins (localvec,
// pinecone) do:
//
//   - a document's ID is the MD5 of its JSON encoding, so indexing the same
//     document twice stores it once; its text parts, joined, are embedded
//     and stored, its metadata beside them (documents with media parts are
//     refused);
//   - the documents live in an engine collection (Config.Collection,
//     default NAME) that records the embedder's identity: using it with
//     another embedder is an error wrapping embed.ErrMismatch;
//   - RetrieverOptions, passed with ai.WithConfig, sets the number of
//     documents (K), a minimum score, and a metadata filter in Chroma's
//     where-syntax ({"year": {"$gte": 2020}}, $and, $or, $in, ...);
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
