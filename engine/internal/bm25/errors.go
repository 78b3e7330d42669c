package bm25

import "errors"

// ErrMalformed is returned by Decode for bytes that are not a stored entry.
var ErrMalformed = errors.New("bm25: malformed full-text entry")
