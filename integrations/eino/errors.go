package mnemo

import "github.com/mnemodb/mnemo/memory/vectorstore"

// Errors, matched with errors.Is: package vectorstore's, which does the
// embedding, checking and searching of an Indexer and a Retriever. A
// collection used with another embedder than the one its vectors were
// made with fails with an error wrapping embed.ErrMismatch.
var (
	// ErrInvalid reports unusable input: a nil database or document, a
	// top k below 1, a score threshold outside [-1, 1], a malformed
	// filter, an option the call does not take, or text that is not valid
	// UTF-8.
	ErrInvalid = vectorstore.ErrInvalid
	// ErrEmpty reports a document or query with nothing to embed: empty,
	// white space only, or text the embedder maps to the zero vector
	// (which has no direction to compare by cosine).
	ErrEmpty = vectorstore.ErrEmpty
	// ErrNoIdentity reports an embedder passed with WithEmbedding that
	// does not report its dimension and identity (wrap it with
	// NewForeignEmbedder).
	ErrNoIdentity = vectorstore.ErrNoIdentity
	// ErrEmbedding reports an embedder that returned the wrong number of
	// vectors, vectors of the wrong dimension, or values a float32
	// cannot hold.
	ErrEmbedding = vectorstore.ErrEmbedding
)
