package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo"
)

// A collection's sequence of positions (mnemo.Sequencer) is one key in
// Pebble, absent while the sequence is unset:
//
//	's' cid(4)   the next position Reserve returns, u64 big-endian
//
// Reserve and Advance hold the collection's sequence lock from reading
// the position to storing the new one, and every handle of the database
// in this process shares the Collection, so they never hand out a
// position twice; no other process can open the database (Open's file
// lock). The position is read once and then kept in memory.
//
// Reserve commits its new position without an fsync: the records that
// use the positions are written after it, to the same Pebble log, and
// Pebble replays its log as a prefix (a synced write makes every earlier
// one durable; a crash keeps no write after one it lost). So a crash that
// forgets a reservation forgets every record that used it too, and the
// cost of a reservation is a write to Pebble's memtable and log buffer,
// not a second fsync for every insert. Advance, which starts a sequence
// over records that are already stored, syncs (unless Options.NoSync).

func sequenceKey(cid uint32) []byte { return cidPrefix(tagSequence, cid) }

// Reserve returns the first of n consecutive positions that no other
// Reserve of the collection returns (see mnemo.Sequencer), or an error
// wrapping mnemo.ErrSequenceUnset while its sequence is unset. It takes
// the collection's sequence lock and writes one key without an fsync;
// concurrent callers wait for each other. On a read-only database it
// fails with ErrReadOnly.
func (c *Collection) Reserve(ctx context.Context, n int) (int64, error) {
	if err := mnemo.CheckReserve(0, n); err != nil {
		return 0, err
	}
	var first int64
	err := c.sequence(ctx, "reserve", pebble.NoSync, func(next int64, started bool) (int64, error) {
		if !started {
			return 0, fmt.Errorf("%w: collection %q", mnemo.ErrSequenceUnset, c.Name())
		}
		if err := mnemo.CheckReserve(next, n); err != nil {
			return 0, err
		}
		first = next
		return next + int64(n), nil
	})
	return first, err
}

// Advance starts the collection's sequence at next, or moves it forward
// to next; a sequence already at next or beyond is left as it is (see
// mnemo.Sequencer). A change is synced before Advance returns (unless
// Options.NoSync).
func (c *Collection) Advance(ctx context.Context, next int64) error {
	if err := mnemo.CheckAdvance(next); err != nil {
		return err
	}
	return c.sequence(ctx, "advance", c.db.writeOpts, func(cur int64, started bool) (int64, error) {
		if started && cur >= next {
			return cur, nil
		}
		return next, nil
	})
}

// sequence runs fn on the collection's sequence (its next position, and
// whether it was started) under the sequence lock, and stores the next
// position fn returns, committed with opts, unless fn fails or the
// sequence is started there already.
func (c *Collection) sequence(ctx context.Context, what string, opts *pebble.WriteOptions, fn func(next int64, started bool) (int64, error)) error {
	done, err := c.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := ctx.Err(); err != nil {
		return err
	}
	// DropCollection holds writes exclusively while it deletes the
	// collection's keys: a sequence stored under the read lock is never
	// left behind a drop.
	c.writes.RLock()
	defer c.writes.RUnlock()
	if c.dropped.Load() {
		return fmt.Errorf("%w: %q was dropped", mnemo.ErrCollectionNotFound, c.Name())
	}
	c.seq.mu.Lock()
	defer c.seq.mu.Unlock()
	if !c.seq.loaded {
		if err := guard(c.loadSequence); err != nil {
			return err
		}
	}
	next, err := fn(c.seq.next, c.seq.started)
	if err != nil || (c.seq.started && next == c.seq.next) {
		return err
	}
	b := c.db.pdb.NewBatch()
	defer b.Close()
	if err := b.Set(sequenceKey(c.id), binary.BigEndian.AppendUint64(nil, uint64(next)), nil); err != nil {
		return fmt.Errorf("engine: %s: %w", what, err)
	}
	if err := c.db.commit(b, opts, c.Name(), fmt.Sprintf("%s in %q", what, c.Name())); err != nil {
		return err
	}
	c.seq.next, c.seq.started = next, true
	return nil
}

// loadSequence reads the stored sequence into c.seq. The caller holds
// c.seq.mu.
func (c *Collection) loadSequence() error {
	v, closer, err := c.db.pdb.Get(sequenceKey(c.id))
	if errors.Is(err, pebble.ErrNotFound) {
		c.seq.loaded = true
		return nil
	}
	if err != nil {
		return readError(fmt.Sprintf("sequence of %q", c.Name()), err)
	}
	defer closer.Close()
	if len(v) != 8 || binary.BigEndian.Uint64(v) > mnemo.MaxPosition {
		return fmt.Errorf("%w: sequence of %q: %x is not a position", ErrCorrupt, c.Name(), v)
	}
	c.seq.next, c.seq.started, c.seq.loaded = int64(binary.BigEndian.Uint64(v)), true, true
	return nil
}
