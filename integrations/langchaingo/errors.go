package mnemo

import (
	"errors"

	"github.com/mnemodb/mnemo/memory/vectorstore"
)

// Errors, matched with errors.Is. The first four are package
// vectorstore's, which does the embedding, checking and searching of a
// Store. A collection used with another embedder than the one its vectors
// were made with fails with an error wrapping embed.ErrMismatch.
var (
	// ErrInvalid reports unusable input: a nil database or embedder, a
	// result count below 1, a score threshold outside [0, 1], a malformed
	// filter, an option the call does not take, or text that is not valid
	// UTF-8.
	ErrInvalid = vectorstore.ErrInvalid
	// ErrEmpty reports a document or query with nothing to embed: empty,
	// white space only, or text the embedder maps to the zero vector
	// (which has no direction to compare by cosine).
	ErrEmpty = vectorstore.ErrEmpty
	// ErrNoIdentity reports an embedder passed with
	// vectorstores.WithEmbedder that does not say its dimension and
	// identity (wrap it with NewForeignEmbedder).
	ErrNoIdentity = vectorstore.ErrNoIdentity
	// ErrEmbedding reports an embedder that returned the wrong number of
	// vectors, or vectors of the wrong dimension or with values that are
	// not finite.
	ErrEmbedding = vectorstore.ErrEmbedding
	// ErrUnsupportedMessage reports a chat message a History cannot keep:
	// generic and function messages, an AI message with the deprecated
	// FunctionCall, or a tool call of a type other than "function".
	ErrUnsupportedMessage = errors.New("mnemo/langchaingo: unsupported chat message")
)
