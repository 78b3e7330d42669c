// Package store provides fact and document memories behind one small
// interface, the Go form of aimu's MemoryStore, SemanticMemoryStore and
// DocumentStore:
//
//   - [Semantic] keeps natural-language facts ("Paul works at Google") in an
//     engine collection and finds them by meaning ("work");
//   - [Documents] keeps path-addressed text documents ("/preferences.md") in
//     a directory, or in memory, with read, write, unique-match edit,
//     listing and full-text search, confined to its root.
//
// Both satisfy [Store], so an agent can swap one for the other. Every type
// is safe for concurrent use by multiple goroutines.
package store

import (
	"context"
	"errors"
)

// Store is the contract both memories share.
type Store interface {
	// Store saves content.
	Store(ctx context.Context, content string) error
	// Search returns up to n stored strings relevant to query, most
	// relevant first; n <= 0 means DefaultResults.
	Search(ctx context.Context, query string, n int) ([]string, error)
	// Delete removes content by identifier (Semantic: every fact equal to
	// it; Documents: the document at that path). An absent identifier is
	// a no-op.
	Delete(ctx context.Context, identifier string) error
	// ListAll returns every stored identifier or content string.
	ListAll(ctx context.Context) ([]string, error)
}

// DefaultResults is the number of results Search returns when n <= 0.
const DefaultResults = 10

// Errors, matched with errors.Is.
var (
	// ErrEmpty reports empty or whitespace-only content or queries.
	ErrEmpty = errors.New("store: empty text")
	// ErrInvalid reports invalid UTF-8 or an unusable option.
	ErrInvalid = errors.New("store: invalid input")
	// ErrTooLarge reports a document over the size limit.
	ErrTooLarge = errors.New("store: document too large")
	// ErrBadPath reports a path that is malformed or would leave the
	// store's root.
	ErrBadPath = errors.New("store: bad path")
	// ErrNotFound reports a document that does not exist.
	ErrNotFound = errors.New("store: no such document")
	// ErrNoMatch reports an Edit whose old text does not occur.
	ErrNoMatch = errors.New("store: text to replace not found")
	// ErrAmbiguous reports an Edit whose old text occurs more than once.
	ErrAmbiguous = errors.New("store: text to replace occurs more than once")
	// ErrEmbedderMismatch reports a store reopened with another embedder.
	ErrEmbedderMismatch = errors.New("store: embedder does not match the stored memory")
)
