package mnemo

import (
	"context"
	"fmt"
)

// Conditional is implemented by collections that can check what an ID
// holds and write it in one step, with no other write to that ID in
// between (both backends' collections do). The memory adapters use it so
// that a scope's ownership check, an update of a record that another
// handle deletes, or a sweep of expired records cannot act on a record
// that changed since it was read.
//
// A condition is called with what an ID holds at the moment of the write:
// whether it exists and its stored metadata (nil when absent), as Get
// would return it. It runs while the write holds the ID, so it must be
// quick, must not change the map and must not call the collection.
type Conditional interface {
	// UpsertIf stores those of records for which cond returns true, in
	// one atomic write, and returns their IDs in order; the others are
	// left as they are (no error). Every record needs an ID.
	UpsertIf(ctx context.Context, cond func(exists bool, stored map[string]any) bool, records ...Record) ([]string, error)
	// DeleteIf deletes those of ids that exist and whose stored metadata
	// cond admits, and returns how many it deleted.
	DeleteIf(ctx context.Context, cond func(stored map[string]any) bool, ids ...string) (int, error)
}

// CheckUpsertIf reports a record UpsertIf cannot take (one without an ID,
// ErrInvalidRecord), so that every backend refuses the same.
func CheckUpsertIf(records []Record) error {
	for i, r := range records {
		if r.ID == "" {
			return fmt.Errorf("%w: record %d: UpsertIf needs an ID", ErrInvalidRecord, i)
		}
	}
	return nil
}
