package mnemo

import "github.com/mnemodb/mnemo/memory/vectorstore"

// Errors, matched with errors.Is: package vectorstore's, which does the
// embedding, checking and searching of a DocStore. A collection used with
// another embedder than the one its vectors were made with fails with an
// error wrapping embed.ErrMismatch.
var (
	// ErrInvalid reports unusable input: a nil Genkit, database, DocStore
	// or document, an empty name, K below 0, a minimum score outside
	// [-1, 1], a malformed filter, retriever options of another type,
	// media parts, or text that is not valid UTF-8.
	ErrInvalid = vectorstore.ErrInvalid
	// ErrEmpty reports a document or query with nothing to embed: no
	// text, white space only, or text the embedder maps to the zero
	// vector (which has no direction to compare by cosine).
	ErrEmpty = vectorstore.ErrEmpty
	// ErrEmbedding reports an embedder that returned the wrong number of
	// embeddings, or vectors of the wrong dimension or with values that
	// are not finite.
	ErrEmbedding = vectorstore.ErrEmbedding
)
