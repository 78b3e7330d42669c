// Package backend is what the memory adapters need of a store: named
// collections of records with a vector dimension, a metric and an
// embedder identity; atomic batches of upserts and deletes; reads by ID,
// in ID order and counts; and vector, text and hybrid queries with the
// engine's metadata filter language.
//
// Two implementations exist: Embedded, the in-process engine (package
// engine), and the PostgreSQL + pgvector backend (package postgres), for a
// memory that processes on several machines share. An agent starts
// embedded and moves to a server by changing the constructor:
//
//	db, err := engine.Open(dir, nil)
//	mem, err := toolmem.NewStore(ctx, backend.Embedded(db), nil)
//	// later:
//	pg, err := postgres.Open(ctx, "postgres://...", nil)
//	mem, err := toolmem.NewStore(ctx, pg, nil)
//
// Both speak the engine's value types (engine.CollectionConfig,
// engine.Record, engine.Query, engine.Hit) and return the engine's
// sentinel errors for the same bad input, so errors.Is works the same on
// either; package backendtest is the conformance suite both pass.
package backend

import (
	"context"

	"github.com/mnemodb/mnemo/engine"
)

// Store is a set of named collections. Implementations are safe for
// concurrent use by multiple goroutines.
type Store interface {
	// CreateCollection creates a collection, or returns the existing one
	// when its config is the same (defaults applied); another config is
	// engine.ErrCollectionExists, a bad name or config
	// engine.ErrInvalidConfig.
	CreateCollection(ctx context.Context, name string, cfg engine.CollectionConfig) (Collection, error)
	// Collection returns the named collection, or
	// engine.ErrCollectionNotFound.
	Collection(ctx context.Context, name string) (Collection, error)
	// Collections returns the names of all collections, sorted.
	Collections(ctx context.Context) ([]string, error)
	// DropCollection deletes a collection and its records
	// (engine.ErrCollectionNotFound when there is none).
	DropCollection(ctx context.Context, name string) error
	// Close releases the store (see each constructor for what it owns).
	Close() error
}

// Collection is one collection of a Store, with the semantics of
// engine.Collection's methods of the same names. A write that returns nil
// is committed; one that returns an error changed nothing.
type Collection interface {
	// Name returns the collection's name.
	Name() string
	// Config returns the collection's config, defaults applied.
	Config() engine.CollectionConfig
	// Upsert inserts or replaces records atomically and returns their IDs
	// (assigned for records without one).
	Upsert(ctx context.Context, records ...engine.Record) ([]string, error)
	// Delete removes the records with the given IDs atomically and
	// returns how many existed.
	Delete(ctx context.Context, ids ...string) (int, error)
	// Get returns the record with the given ID and whether it exists.
	Get(ctx context.Context, id string) (engine.Record, bool, error)
	// Scan returns up to limit records in ascending ID order (byte-wise)
	// after the ID after, and the ID to continue after ("" at the end).
	Scan(ctx context.Context, after string, limit int) ([]engine.Record, string, error)
	// Count returns the number of records.
	Count(ctx context.Context) (int, error)
	// Query answers a vector, text or hybrid query (see engine.Query).
	Query(ctx context.Context, q engine.Query) ([]engine.Hit, error)
}
