package mnemo

import (
	"context"
	"fmt"
)

// Sequencer is implemented by a Collection that keeps a sequence of
// positions in the store itself, one per collection, shared by every
// handle and process that writes it: the memory adapters number the
// memories they store with it (the position a Spread query reads), so
// that two writers never give two memories one place. Both backends
// implement it: the engine with a counter stored beside the collection's
// records, PostgreSQL with a row of a table on the server.
// Implementations are safe for concurrent use by multiple goroutines.
//
// A sequence starts unset: a collection made before its store kept
// sequences may already hold positions that the store cannot see (they
// are the writer's own metadata), and only the writer knows where to
// find them. While the sequence is unset Reserve fails with an error
// wrapping ErrSequenceUnset; the writer then finds the first free
// position once (a scan of the collection) and starts the sequence there
// with Advance. Advance never moves a sequence back, so writers that race
// to start it need no lock: each passes what it found, and the largest
// wins. The sequence is stored, so this happens once per collection,
// not once per process or handle. Dropping a collection drops its
// sequence; a collection created again under the name starts unset.
//
// Positions are integers from 0 to MaxPosition-1. A reserved position
// that is never used is a gap, harmless to whoever reads positions as an
// order. Durability, as far as the store makes its writes durable:
// Advance is durable when it returns; Reserve is durable no later than
// any write to the store acknowledged after it, so
// a crash can forget a reservation only together with every write that
// could have used it, and a later Reserve never returns a position that a
// surviving record got from an earlier one.
type Sequencer interface {
	// Reserve returns first, the first of the n consecutive positions
	// first..first+n-1, which no other Reserve of the collection returns,
	// through any handle, in any process, before or after a restart.
	// Concurrent calls are ordered by the store. It fails with an error
	// wrapping ErrSequenceUnset while the sequence is unset (see
	// Advance), ErrCollectionNotFound once the collection was dropped,
	// and ErrInvalidConfig when n is below 1 or the sequence would pass
	// MaxPosition (see CheckReserve).
	Reserve(ctx context.Context, n int) (first int64, err error)
	// Advance starts the sequence at next, or moves it forward to next,
	// so that Reserve returns only positions of next or more; a sequence
	// already at next or beyond is left as it is. next must be from 0 to
	// MaxPosition (ErrInvalidConfig otherwise).
	Advance(ctx context.Context, next int64) error
}

// MaxPosition bounds a Sequencer's positions: they are below it, so that
// every one is an integer that metadata, whose numbers are float64, holds
// exactly.
const MaxPosition = 1 << 53

// CheckReserve reports whether a sequence whose next position is next
// can reserve n positions: n at least 1, and next+n at most MaxPosition
// (ErrInvalidConfig otherwise). Sequencers check it, so that what one
// backend refuses every backend refuses.
func CheckReserve(next int64, n int) error {
	if n < 1 {
		return fmt.Errorf("%w: reserve %d positions, want at least 1", ErrInvalidConfig, n)
	}
	if int64(n) > MaxPosition-next {
		return fmt.Errorf("%w: reserve %d positions from %d: the sequence ends at %d", ErrInvalidConfig, n, next, int64(MaxPosition))
	}
	return nil
}

// CheckAdvance reports whether a sequence can be advanced to next: from
// 0 to MaxPosition (ErrInvalidConfig otherwise). Sequencers check it.
func CheckAdvance(next int64) error {
	if next < 0 || next > MaxPosition {
		return fmt.Errorf("%w: advance the sequence to %d, want 0 to %d", ErrInvalidConfig, next, int64(MaxPosition))
	}
	return nil
}

// NextPosition returns one more than the largest number stored under
// PositionField in c's records (0 for none; numbers past MaxPosition
// are not positions), found by a scan of every record: where a writer
// starts a Sequencer that is unset (see Advance).
func NextPosition(ctx context.Context, c Collection) (int64, error) {
	const page = 1000
	var next int64
	after := ""
	for {
		recs, more, err := c.Scan(ctx, after, page)
		if err != nil {
			return 0, err
		}
		for _, r := range recs {
			if p, ok := r.Metadata[PositionField].(float64); ok && p >= float64(next) && p < MaxPosition {
				next = int64(p) + 1
			}
		}
		if more == "" {
			return next, nil
		}
		after = more
	}
}
