package mnemo

import (
	"context"
	"errors"
	"fmt"
)

// Replacer is implemented by stores that can put one collection in
// place of another atomically (both backends do): the records of name are
// deleted and the collection with takes its name, in one commit, so every
// reader and every restart sees the old collection under name or the new
// one, never a mix or neither. Writes to name wait while final runs;
// final sees name's collection with no write in flight and may bring with
// up to date before the switch (the last catch-up of a copy); when it
// returns an error nothing is replaced. Writes that waited, and writes
// through handles of the old collection afterwards, fail with an error
// wrapping ErrCollectionNotFound, so a writer that opens name again finds
// the new collection. final may read both collections and write with; it
// must not touch other collections, and should be short.
type Replacer interface {
	ReplaceCollection(ctx context.Context, name, with string, final func(ctx context.Context, old, new Collection) error) error
}

// ErrNoReplace reports a store that cannot replace a collection
// atomically (it is not a Replacer).
var ErrNoReplace = errors.New("mnemo: the store cannot replace a collection atomically")

// ReplacerOf returns the Replacer s is, or wraps (Unwrapper); ok is
// false when it neither is nor wraps one.
func ReplacerOf(s Store) (r Replacer, ok bool) { return unwrapTo[Replacer](s) }

// ReplaceCollection replaces name with with in s when s is a Replacer, or
// wraps one (Unwrapper); otherwise it fails with ErrNoReplace.
func ReplaceCollection(ctx context.Context, s Store, name, with string, final func(ctx context.Context, old, new Collection) error) error {
	r, ok := ReplacerOf(s)
	if !ok {
		return fmt.Errorf("%w: %T", ErrNoReplace, s)
	}
	return r.ReplaceCollection(ctx, name, with, final)
}
