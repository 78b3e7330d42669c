// Package store provides the fact memory and the small interface it
// shares with the document memory, the Go form of aimu's MemoryStore and
// SemanticMemoryStore:
//
//   - [Store] is the contract (aimu's MemoryStore): Store, Search, Delete
//     and ListAll;
//   - [Semantic] keeps natural-language facts ("Paul works at Google") in an
//     engine collection and finds them by meaning ("work").
//
// The document store, aimu's DocumentStore (path-addressed text documents
// such as "/preferences.md", in a directory or in memory), is in package
// docstore (github.com/mnemodb/mnemo/memory/docstore). Semantic and
// docstore.Store both satisfy [Store], so an agent can swap one for the
// other; where Store names an error, both return this package's sentinel
// ([ErrEmpty], [ErrInvalid]), so code written against Store matches
// errors the same way whichever it holds. Every type is safe for
// concurrent use by multiple goroutines.
//
// # Text
//
// Any fact or query with a non-space character is stored and searched,
// symbols and emoji alone ("?", "🙂") included, as in the original. Empty
// or whitespace-only content cannot be stored by Store or Add (ErrEmpty:
// nothing could find it, while the original stores it); as a query it
// finds no facts, with no error (the original returns the facts nearest
// to the embedding of "").
package store

import "context"

// Store is the contract both memories share: [Semantic] and
// docstore.Store implement it. Where it names an error, every
// implementation returns this package's sentinel. Both are safe for
// concurrent use by multiple goroutines.
type Store interface {
	// Store saves content. Empty or whitespace-only content fails with
	// ErrEmpty and content that is not valid UTF-8 with ErrInvalid, and
	// nothing is saved.
	Store(ctx context.Context, content string) error
	// Search returns up to n stored strings relevant to query, most
	// relevant first; n <= 0 means DefaultResults.
	Search(ctx context.Context, query string, n int) ([]string, error)
	// Delete removes content by identifier (Semantic: every fact equal to
	// it; docstore.Store: the document at that path). An absent identifier
	// is a no-op.
	Delete(ctx context.Context, identifier string) error
	// ListAll returns every stored identifier or content string (Semantic:
	// the facts; docstore.Store: the paths).
	ListAll(ctx context.Context) ([]string, error)
}

// DefaultResults is the number of results Search returns when n <= 0.
const DefaultResults = 10
