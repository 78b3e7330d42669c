package chat

import "errors"

// Errors, matched with errors.Is. A VectorMemory opened with another
// embedder than the one its vectors were made with fails with an error
// wrapping embed.ErrMismatch.
var (
	// ErrNotEmbeddable reports content a VectorMemory cannot search
	// (binary, images, empty text).
	ErrNotEmbeddable = errors.New("chat: content cannot be embedded")
	// ErrInvalid reports a malformed Content or query.
	ErrInvalid = errors.New("chat: invalid content")
)
