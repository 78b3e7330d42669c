package vectorstore

import "errors"

// Errors, matched with errors.Is. The framework integrations return them
// as their own (langchaingo.ErrInvalid is ErrInvalid, and so on). A
// collection used with another embedder than the one its vectors were
// made with fails with an error wrapping embed.ErrMismatch; one that
// belongs to another kind of memory with one wrapping
// mnemo.ErrCollectionKind.
var (
	// ErrInvalid reports unusable input: a nil database or embedder, k
	// below 1, a minimum score outside [-1, 1], a malformed filter, a
	// negative batch size, or text that is not valid UTF-8.
	ErrInvalid = errors.New("vectorstore: invalid input")
	// ErrEmpty reports a document or query with nothing to embed: empty,
	// white space only, or text the embedder maps to the zero vector
	// (which has no direction to compare by cosine).
	ErrEmpty = errors.New("vectorstore: empty text")
	// ErrNoIdentity reports a framework's embedder, passed for one call,
	// that does not say its dimension and identity (it is not an
	// embed.Embedder: wrap it in a Foreign).
	ErrNoIdentity = errors.New("vectorstore: embedder has no dimension and identity")
	// ErrEmbedding reports an embedder that returned the wrong number of
	// vectors, vectors of the wrong dimension, or values that are not
	// finite float32s.
	ErrEmbedding = errors.New("vectorstore: embedder returned unusable vectors")
)
