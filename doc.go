// Package mnemo is the data model every mnemo backend speaks: collections
// of records (an ID, a vector, a text and JSON metadata) with a config
// that fixes their dimension, metric and full-text index; vector, text and
// hybrid queries with a metadata filter; the hits they return; and the
// Store and Collection interfaces that the memory adapters
// (github.com/mnemodb/mnemo/memory/...) and the framework integrations are
// written against.
//
// Two backends implement it: the embedded database (package engine: a
// directory on local disk, in-process, no server) and PostgreSQL with
// pgvector (package postgres: one memory shared by processes on several
// machines). Neither imports the other, and this package imports neither:
// a program that uses only PostgreSQL links no part of the embedded
// engine. An agent moves from one to the other by changing the line that
// opens its Store:
//
//	s, err := engine.OpenStore(dir, nil)                 // embedded
//	s, err := postgres.Open(ctx, "postgres://...", nil)  // shared server
//	mem, err := toolmem.New(ctx, s, nil)                 // either
//
// # One behaviour on every backend
//
// What makes the backends interchangeable lives here, so that each applies
// the same rules instead of a copy of them:
//
//   - validation: CheckCollectionName, CheckID, CheckRecord, CheckVector,
//     CheckQuery and CollectionConfig.Validate refuse the same input with
//     the same sentinel errors (ErrInvalidID, ErrDimension, ErrBadFilter,
//     ...), matched with errors.Is;
//   - configs: CollectionConfig.WithDefaults and Equal decide what a
//     collection is, so that reopening it with another config fails
//     (ErrCollectionExists) the same way;
//   - text: TextTerms is what the full-text index holds for a record, so
//     BM25 scores agree;
//   - filters: ParseFilter and NewFilter parse the one filter language,
//     Filter.Match defines it and Filter.Tree hands it to a backend that
//     translates it (to SQL, say);
//   - ranking: Similarity, FuseScores and SortHits score and order hits,
//     and Spread.Place says where a record sits for score spreading;
//   - positions: a Collection that is a Sequencer hands out the positions
//     that spreading reads, unique across its handles and processes
//     (CheckReserve and CheckAdvance refuse the same arguments
//     everywhere).
//
// Package mnemotest is the conformance suite: each backend's tests run it,
// and it checks that they agree, down to the order of equal scores.
//
// # Concurrency
//
// The value types (Record, Query, Hit, CollectionConfig) are plain data:
// a Filter is immutable once built and safe to share; the others are not
// copied by the functions that take them, so do not change one while a
// call that was given it runs. Implementations of Store and Collection
// are safe for concurrent use by multiple goroutines.
package mnemo
