package embed

import "errors"

// Sentinel errors, matched with errors.Is.
var (
	// ErrConfig reports unusable options (no model, no API key, ...).
	ErrConfig = errors.New("embed: invalid configuration")
	// ErrResponse reports a server answer that does not fit: wrong count,
	// wrong dimension, malformed JSON, a body over MaxResponseBytes.
	ErrResponse = errors.New("embed: bad response")
	// ErrRequest reports a request the server refused (a 4xx other than
	// 429); the error text carries the server's message.
	ErrRequest = errors.New("embed: request refused")
	// ErrUnavailable reports a server that kept failing (429 or 5xx)
	// until the retries ran out.
	ErrUnavailable = errors.New("embed: server unavailable")
	// ErrMismatch reports stored vectors made by another embedder than
	// the one a memory was opened with: every memory adapter returns it
	// (wrapped) rather than compare vectors from two different spaces.
	ErrMismatch = errors.New("embed: embedder does not match the stored vectors")
)
