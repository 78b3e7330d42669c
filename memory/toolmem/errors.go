package toolmem

import "errors"

// Errors, matched with errors.Is.
var (
	// ErrEmptyText reports an empty or whitespace-only question or text.
	ErrEmptyText = errors.New("toolmem: empty text")
	// ErrEmbedderMismatch reports a memory reopened with an embedder other
	// than the one its vectors were made with.
	ErrEmbedderMismatch = errors.New("toolmem: embedder does not match the stored memory")
	// ErrInvalid reports other bad input (invalid UTF-8, a bad ID).
	ErrInvalid = errors.New("toolmem: invalid input")
)
