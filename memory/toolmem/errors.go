package toolmem

import "errors"

// Errors, matched with errors.Is. A memory opened with another embedder
// than the one its vectors were made with fails with an error wrapping
// embed.ErrMismatch.
var (
	// ErrEmptyText reports an empty or whitespace-only question or text
	// given to Store or SaveText.
	ErrEmptyText = errors.New("toolmem: empty text")
	// ErrInvalid reports other bad input (invalid UTF-8, a bad ID).
	ErrInvalid = errors.New("toolmem: invalid input")
)
