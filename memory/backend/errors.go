package backend

import "errors"

// Errors, matched with errors.Is. Every other error a Store returns for bad
// input is one of package engine's sentinels, on every backend.
var (
	// ErrCollectionKind reports a collection opened by a memory of another
	// kind than the one that made it (see engine.CollectionConfig.Kind):
	// a fact store named like a tool memory's collection, say. The
	// collection is left as it was.
	ErrCollectionKind = errors.New("backend: collection belongs to another kind of memory")
	// ErrLocked reports a TryLock of a name that another handle holds (in
	// this process or, on a server, in any process); the message names the
	// holder where the backend can tell.
	ErrLocked = errors.New("backend: locked by another handle")
	// ErrLockLost reports a lock that is no longer held although it was
	// not unlocked: on a server, the connection that held it ended, and
	// another handle may have taken it since (see Lock.Check).
	ErrLockLost = errors.New("backend: lock lost")
)
