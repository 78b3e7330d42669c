package store

import "errors"

// Errors, matched with errors.Is. A Semantic store opened with another
// embedder than the one its vectors were made with fails with an error
// wrapping embed.ErrMismatch.
var (
	// ErrEmpty reports empty or whitespace-only content given to Store or
	// Add (see Text in the package doc). Every implementation of [Store]
	// reports it so, package docstore's too.
	ErrEmpty = errors.New("store: empty text")
	// ErrInvalid reports invalid UTF-8 or an unusable option. Every
	// implementation of [Store] reports content given to Store that is
	// not UTF-8 with it, package docstore's too (which reports its other
	// invalid input with docstore.ErrInvalid).
	ErrInvalid = errors.New("store: invalid input")
	// ErrNotFound reports a fact the handle cannot see: absent, expired
	// or of another scope (Semantic.Update, History, AddWith Replaces).
	ErrNotFound = errors.New("store: no such fact")
	// ErrConflict reports an update that found the fact changed by
	// another handle each time it tried (Semantic.Update).
	ErrConflict = errors.New("store: the fact kept changing")
)
