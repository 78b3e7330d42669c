package mnemotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo"
)

// sequencer returns c as a mnemo.Sequencer, or skips t for a backend
// whose collections keep no sequence (the adapters then count positions
// themselves). Each backend's tests check that its collections are one.
func sequencer(t *testing.T, c mnemo.Collection) mnemo.Sequencer {
	t.Helper()
	s, ok := c.(mnemo.Sequencer)
	if !ok {
		t.Skipf("%T is not a mnemo.Sequencer", c)
	}
	return s
}

func mustReserve(t *testing.T, s mnemo.Sequencer, n int, want int64) {
	t.Helper()
	if got, err := s.Reserve(context.Background(), n); err != nil || got != want {
		t.Fatalf("Reserve(%d) = %d, %v; want %d", n, got, err, want)
	}
}

func mustAdvance(t *testing.T, s mnemo.Sequencer, next int64) {
	t.Helper()
	if err := s.Advance(context.Background(), next); err != nil {
		t.Fatalf("Advance(%d): %v", next, err)
	}
}

// testSequence checks a collection's sequence of positions: unset until
// Advance, consecutive reservations, Advance never moving back, bad
// arguments and the end refused, one sequence per collection shared by
// its handles, and dropped with the collection.
func testSequence(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	cfg := mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat}
	c := mustCreate(t, s, "seq", cfg)
	seq := sequencer(t, c)
	if _, err := seq.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrSequenceUnset) {
		t.Fatalf("Reserve of a new collection: %v, want ErrSequenceUnset", err)
	}
	for _, n := range []int{0, -1} {
		if _, err := seq.Reserve(ctx, n); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("Reserve(%d): %v, want ErrInvalidConfig", n, err)
		}
	}
	for _, next := range []int64{-1, mnemo.MaxPosition + 1} {
		if err := seq.Advance(ctx, next); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("Advance(%d): %v, want ErrInvalidConfig", next, err)
		}
	}
	mustAdvance(t, seq, 5)
	mustReserve(t, seq, 1, 5)
	mustReserve(t, seq, 3, 6)
	mustReserve(t, seq, 1, 9)
	mustAdvance(t, seq, 3) // behind: nothing changes
	mustAdvance(t, seq, 10)
	mustReserve(t, seq, 1, 10)
	mustAdvance(t, seq, 20)
	mustReserve(t, seq, 2, 20)

	// Another handle of the collection has the same sequence; another
	// collection has its own.
	again, err := s.Collection(ctx, "seq")
	if err != nil {
		t.Fatal(err)
	}
	mustReserve(t, sequencer(t, again), 1, 22)
	mustReserve(t, seq, 1, 23)
	other := sequencer(t, mustCreate(t, s, "seq-other", cfg))
	if _, err := other.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrSequenceUnset) {
		t.Fatalf("Reserve of another collection: %v, want ErrSequenceUnset", err)
	}
	mustAdvance(t, other, 0)
	mustReserve(t, other, 1, 0)
	mustReserve(t, seq, 1, 24)

	// Reservations write no record.
	if n, err := c.Count(ctx); err != nil || n != 0 {
		t.Fatalf("Count after reservations: %d, %v; want 0", n, err)
	}

	// The end of the sequence.
	mustAdvance(t, other, mnemo.MaxPosition-1)
	if _, err := other.Reserve(ctx, 2); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Fatalf("Reserve past MaxPosition: %v, want ErrInvalidConfig", err)
	}
	mustReserve(t, other, 1, mnemo.MaxPosition-1)
	if _, err := other.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Fatalf("Reserve at MaxPosition: %v, want ErrInvalidConfig", err)
	}
	mustAdvance(t, other, mnemo.MaxPosition)

	// Dropping the collection drops its sequence.
	if err := s.DropCollection(ctx, "seq"); err != nil {
		t.Fatal(err)
	}
	if _, err := seq.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Reserve of a dropped collection: %v, want ErrCollectionNotFound", err)
	}
	if err := seq.Advance(ctx, 100); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Advance of a dropped collection: %v, want ErrCollectionNotFound", err)
	}
	fresh := sequencer(t, mustCreate(t, s, "seq", cfg))
	if _, err := fresh.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrSequenceUnset) {
		t.Fatalf("Reserve of a collection created again: %v, want ErrSequenceUnset", err)
	}
}

// testSharedSequence: goroutines reserving through two handles at once
// get distinct positions, which together are exactly the positions
// reserved (no failure, no gap); writers that race to start a sequence
// leave it at the largest start.
func testSharedSequence(t *testing.T, a, b mnemo.Store) {
	ctx := context.Background()
	cfg := mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat}
	ca := mustCreate(t, a, "shared-seq", cfg)
	cb, err := b.Collection(ctx, "shared-seq")
	if err != nil {
		t.Fatal(err)
	}
	handles := []mnemo.Sequencer{sequencer(t, ca), sequencer(t, cb)}

	// Racing starts: the largest wins, whichever comes last.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			if err := handles[i%2].Advance(ctx, int64(100+i*7%16)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Advance: %v", err)
	}
	mustReserve(t, handles[0], 1, 115)

	const workers, rounds = 8, 25
	got := make([][]int64, workers)
	fail := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				n := 1 + (w+r)%3
				first, err := handles[w%2].Reserve(ctx, n)
				if err != nil {
					fail <- fmt.Errorf("worker %d, round %d: %w", w, r, err)
					return
				}
				for p := first; p < first+int64(n); p++ {
					got[w] = append(got[w], p)
				}
			}
		})
	}
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	all := slices.Concat(got...)
	slices.Sort(all)
	for i, p := range all {
		if p != 116+int64(i) {
			t.Fatalf("position %d of %d reserved is %d, want %d (a repeat or a gap)", i, len(all), p, 116+int64(i))
		}
	}
	mustReserve(t, handles[1], 1, 116+int64(len(all)))
}
