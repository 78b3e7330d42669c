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
//
// # Text
//
// Any fact or query with a non-space character is stored and searched,
// symbols and emoji alone ("?", "🙂") included, as in the original. Empty
// or whitespace-only content cannot be stored by Store or Add (ErrEmpty:
// nothing could find it, while the original stores it); as a query it
// finds no facts and no documents by meaning, with no error (the original
// returns the facts nearest to the embedding of ""). Full-text search is
// a substring search, as in the original: an empty query matches every
// document. Documents.Write takes any UTF-8 content, empty included.
package store

import "context"

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
