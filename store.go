package mnemo

import "context"

// Store is a set of named collections. Implementations are safe for
// concurrent use by multiple goroutines.
type Store interface {
	// CreateCollection creates a collection, or returns the existing one
	// when its config is the same (defaults applied); another config is
	// ErrCollectionExists, a bad name or config
	// ErrInvalidConfig.
	CreateCollection(ctx context.Context, name string, cfg CollectionConfig) (Collection, error)
	// Collection returns the named collection, or
	// ErrCollectionNotFound.
	Collection(ctx context.Context, name string) (Collection, error)
	// Collections returns the names of all collections, sorted.
	Collections(ctx context.Context) ([]string, error)
	// DropCollection deletes a collection and its records
	// (ErrCollectionNotFound when there is none).
	DropCollection(ctx context.Context, name string) error
	// Close releases the store (see each constructor for what it owns).
	Close() error
}

// Collection is one collection of a Store. Implementations are safe for
// concurrent use by multiple goroutines. A write that returns nil
// is committed; one that returns an error changed nothing.
type Collection interface {
	// Name returns the collection's name.
	Name() string
	// Config returns the collection's config, defaults applied.
	Config() CollectionConfig
	// Upsert inserts or replaces records atomically and returns their IDs
	// (assigned for records without one).
	Upsert(ctx context.Context, records ...Record) ([]string, error)
	// Delete removes the records with the given IDs atomically and
	// returns how many existed.
	Delete(ctx context.Context, ids ...string) (int, error)
	// Get returns the record with the given ID and whether it exists.
	Get(ctx context.Context, id string) (Record, bool, error)
	// Scan returns up to limit records in ascending ID order (byte-wise)
	// after the ID after, and the ID to continue after ("" at the end).
	Scan(ctx context.Context, after string, limit int) ([]Record, string, error)
	// Count returns the number of records.
	Count(ctx context.Context) (int, error)
	// Query answers a vector, text or hybrid query (see Query).
	Query(ctx context.Context, q Query) ([]Hit, error)
}
