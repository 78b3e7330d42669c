package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mnemodb/mnemo"
)

// A collection's sequence of positions (mnemo.Sequencer) is a row on the
// server, absent while the sequence is unset, and deleted with the
// collection:
//
//	mnemo_positions (
//	    collection bigint PRIMARY KEY REFERENCES mnemo_collections (id) ON DELETE CASCADE,
//	    next       bigint NOT NULL CHECK (next >= 0)   -- the next position Reserve returns
//	)
//
// Reserve is one UPDATE of that row in its own short transaction: the
// row lock orders concurrent reservations of every process, and the
// commit makes the reservation durable before Reserve returns.

// reserveSQL advances the sequence of collection $1 by $2 unless that
// would pass $3 (mnemo.MaxPosition), and reports the first position
// reserved (NULL when none was), the next position as the statement's
// snapshot saw it (NULL: unset), and whether the collection exists: all
// a caller needs to tell a reservation from an unset sequence, a full
// one and a dropped collection, in one round trip. The UPDATE of a row
// another transaction changed meanwhile waits for it and re-reads the
// row, as UPDATE does under READ COMMITTED.
const reserveSQL = `WITH r AS (
	UPDATE mnemo_positions SET next = next + $2::bigint
	WHERE collection = $1::bigint AND next <= $3::bigint - $2::bigint
	RETURNING next - $2::bigint AS first
)
SELECT (SELECT first FROM r),
	(SELECT next FROM mnemo_positions WHERE collection = $1),
	EXISTS (SELECT 1 FROM mnemo_collections WHERE id = $1)`

// Reserve returns the first of n consecutive positions that no other
// Reserve of the collection returns, in any process (see
// mnemo.Sequencer), or an error wrapping mnemo.ErrSequenceUnset while
// its sequence is unset. It is one statement in its own transaction,
// committed before it returns; concurrent callers wait for each other
// only for that statement. A retry after a lost connection whose commit
// had gone through reserves again: the first reservation is a gap. On a
// read-only server it fails with ErrReadOnly.
func (c *Collection) Reserve(ctx context.Context, n int) (int64, error) {
	if err := c.s.enter(ctx); err != nil {
		return 0, err
	}
	if err := mnemo.CheckReserve(0, n); err != nil {
		return 0, err
	}
	var first int64
	err := c.s.do(ctx, func(ctx context.Context) error {
		var got, next *int64
		var exists bool
		if err := c.s.pool.QueryRow(ctx, reserveSQL, c.id, int64(n), int64(mnemo.MaxPosition)).Scan(&got, &next, &exists); err != nil {
			return positionsError(err)
		}
		switch {
		case got != nil:
			first = *got
			return nil
		case !exists:
			return fmt.Errorf("%w: %q was dropped", mnemo.ErrCollectionNotFound, c.name)
		case next == nil:
			return fmt.Errorf("%w: collection %q", mnemo.ErrSequenceUnset, c.name)
		}
		// The row is there and was not updated: the sequence (as its
		// latest version stands, perhaps past the snapshot's) is too
		// close to its end.
		return fmt.Errorf("%w: reserve %d positions of %q: the sequence ends at %d", mnemo.ErrInvalidConfig, n, c.name, int64(mnemo.MaxPosition))
	})
	return first, err
}

// Advance starts the collection's sequence at next, or moves it forward
// to next; a sequence already at next or beyond is left as it is (see
// mnemo.Sequencer). It is one statement, committed before it returns,
// and idempotent. On a read-only server it fails with ErrReadOnly.
func (c *Collection) Advance(ctx context.Context, next int64) error {
	if err := c.s.enter(ctx); err != nil {
		return err
	}
	if err := mnemo.CheckAdvance(next); err != nil {
		return err
	}
	return c.s.do(ctx, func(ctx context.Context) error {
		_, err := c.s.pool.Exec(ctx, `INSERT INTO mnemo_positions AS p (collection, next) VALUES ($1, $2)
			ON CONFLICT (collection) DO UPDATE SET next = EXCLUDED.next WHERE p.next < EXCLUDED.next`, c.id, next)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23503" { // foreign_key_violation: no such collection
			return fmt.Errorf("%w: %q was dropped", mnemo.ErrCollectionNotFound, c.name)
		}
		return positionsError(err)
	})
}

// positionsError reports a missing mnemo_positions table as the damaged
// schema it is (ErrSchema), not as the dropped collection that an
// undefined table means elsewhere (serverError).
func positionsError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return fmt.Errorf("%w: %v", ErrSchema, err)
	}
	return err
}
