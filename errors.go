package mnemo

import "errors"

// Sentinel errors, matched with errors.Is. Every backend returns them for
// the same conditions, wrapped with the details; a backend's own errors
// (a closed database, a full disk, a server that does not answer) are its
// own sentinels, in its package.
var (
	// ErrClosed reports use of a closed store (or database) or of a
	// collection of one.
	ErrClosed = errors.New("mnemo: store is closed")
	// ErrCollectionNotFound reports an unknown (or dropped) collection.
	ErrCollectionNotFound = errors.New("mnemo: collection not found")
	// ErrCollectionExists reports a create whose config differs from the
	// existing collection's.
	ErrCollectionExists = errors.New("mnemo: collection exists with another config")
	// ErrCollectionKind reports a collection opened by a memory of another
	// kind than the one that made it (see CollectionConfig.Kind): a fact
	// store named like a tool memory's collection, say. The collection is
	// left as it was.
	ErrCollectionKind = errors.New("mnemo: collection belongs to another kind of memory")
	// ErrInvalidConfig reports an unusable collection config or options.
	ErrInvalidConfig = errors.New("mnemo: invalid config")
	// ErrInvalidID reports an empty, over-long or non-UTF-8 record ID.
	ErrInvalidID = errors.New("mnemo: invalid record id")
	// ErrInvalidRecord reports bad content or metadata, or a duplicate ID
	// in one batch.
	ErrInvalidRecord = errors.New("mnemo: invalid record")
	// ErrBatchTooLarge reports an Upsert whose records hold more than
	// MaxBatchBytes together; split it into several calls.
	ErrBatchTooLarge = errors.New("mnemo: batch too large")
	// ErrDimension reports a vector whose length is not the collection's
	// dimension.
	ErrDimension = errors.New("mnemo: dimension mismatch")
	// ErrNonFinite reports a vector holding a NaN or an infinity.
	ErrNonFinite = errors.New("mnemo: vector component is not finite")
	// ErrZeroVector reports a zero vector under the cosine metric, which
	// has no direction.
	ErrZeroVector = errors.New("mnemo: zero vector under the cosine metric")
	// ErrNormOverflow reports a vector under the cosine metric whose
	// components are finite but whose norm overflows float32.
	ErrNormOverflow = errors.New("mnemo: vector norm overflows float32")
	// ErrBadFilter reports a malformed metadata filter.
	ErrBadFilter = errors.New("mnemo: bad filter")
	// ErrBadQuery reports a malformed query (k, ef, similarity bounds).
	ErrBadQuery = errors.New("mnemo: bad query")
	// ErrLockHeld reports a TryLock of a name that another handle holds (in
	// this process or, on a server, in any process); the message names the
	// holder where the backend can tell.
	ErrLockHeld = errors.New("mnemo: lock held by another handle")
	// ErrLockLost reports a lock that is no longer held although it was
	// not unlocked: on a server, the connection that held it ended, and
	// another handle may have taken it since (see Lock.Check).
	ErrLockLost = errors.New("mnemo: lock lost")
	// ErrSequenceUnset reports a Reserve of a collection whose sequence
	// of positions was never started (see Sequencer): its writer finds
	// the first free position and calls Advance.
	ErrSequenceUnset = errors.New("mnemo: sequence not started")
)
