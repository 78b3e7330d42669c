package mnemo

import "errors"

// Errors, matched with errors.Is. A collection used with another embedder
// than the one its vectors were made with fails with an error wrapping
// embed.ErrMismatch.
var (
	// ErrInvalid reports unusable input: a nil database or embedder, a
	// result count below 1, a score threshold outside [0, 1], a malformed
	// filter, an option the call does not take, or text that is not valid
	// UTF-8.
	ErrInvalid = errors.New("mnemo/langchaingo: invalid input")
	// ErrEmpty reports a document or query with nothing to embed: empty,
	// white space only, or text the embedder maps to the zero vector
	// (which has no direction to compare by cosine).
	ErrEmpty = errors.New("mnemo/langchaingo: empty text")
	// ErrNoIdentity reports an embedder passed with
	// vectorstores.WithEmbedder that does not say its dimension and
	// identity (wrap it with NewForeignEmbedder).
	ErrNoIdentity = errors.New("mnemo/langchaingo: embedder has no dimension and identity")
	// ErrEmbedding reports a langchaingo embedder that returned the wrong
	// number of vectors, or vectors of the wrong dimension.
	ErrEmbedding = errors.New("mnemo/langchaingo: embedder returned unusable vectors")
	// ErrUnsupportedMessage reports a chat message a History cannot keep:
	// generic and function messages, an AI message with the deprecated
	// FunctionCall, or a tool call of a type other than "function".
	ErrUnsupportedMessage = errors.New("mnemo/langchaingo: unsupported chat message")
)
