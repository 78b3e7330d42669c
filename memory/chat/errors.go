package chat

import "errors"

// Errors, matched with errors.Is.
var (
	// ErrNotEmbeddable reports content a VectorMemory cannot search
	// (binary, images, empty text).
	ErrNotEmbeddable = errors.New("chat: content cannot be embedded")
	// ErrInvalid reports a malformed Content or query.
	ErrInvalid = errors.New("chat: invalid content")
)
