package mnemo

import "errors"

// Errors, matched with errors.Is. A collection used with another embedder
// than the one its vectors were made with fails with an error wrapping
// embed.ErrMismatch.
var (
	// ErrInvalid reports unusable input: a nil Genkit, database, DocStore
	// or document, an empty name, K below 0, a minimum score outside
	// [-1, 1], a malformed filter, retriever options of another type,
	// media parts, or text that is not valid UTF-8.
	ErrInvalid = errors.New("mnemo/genkit: invalid input")
	// ErrEmpty reports a document or query with nothing to embed: no
	// text, white space only, or text the embedder maps to the zero
	// vector (which has no direction to compare by cosine).
	ErrEmpty = errors.New("mnemo/genkit: empty text")
	// ErrEmbedding reports a Genkit embedder that returned the wrong
	// number of embeddings, or vectors of the wrong dimension.
	ErrEmbedding = errors.New("mnemo/genkit: embedder returned unusable vectors")
)
