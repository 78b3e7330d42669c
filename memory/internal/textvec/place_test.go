package textvec_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
)

var (
	errEmpty   = errors.New("test: empty")
	errInvalid = errors.New("test: invalid")
)

// oldCollection returns a collection of s holding memories at positions
// 0..n-1, stored as before collections kept a sequence: their sequence is
// unset.
func oldCollection(t *testing.T, s mnemo.Store, n int) mnemo.Collection {
	t.Helper()
	ctx := context.Background()
	sp, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
	c, err := sp.Collection(ctx, s, "old", "test")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		v, err := sp.Vector(ctx, "text", fmt.Sprint("memory number ", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprintf("m%03d", i), Vector: v, Metadata: map[string]any{textvec.PosField: i}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// place is Space.Place in a new Space (as in a new process) of one
// position.
func place(t *testing.T, c mnemo.Collection) int64 {
	t.Helper()
	sp, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
	p, err := sp.Place(context.Background(), c, 1)
	if err != nil {
		t.Fatalf("Place: %v", err)
	}
	return p
}

// TestPlaceSequence: on a backend whose collections keep a sequence, a
// collection written before it had one is scanned once, by the first
// Place of any Space; every later Place, of that Space or another (a
// handle of another process), reserves the next position without a scan
// and never repeats one.
func TestPlaceSequence(t *testing.T) {
	var scans atomic.Int64
	s := &memtest.Faulty{Store: memtest.Store(t), Hook: func(_ context.Context, op, _ string) error {
		if op == "scan" {
			scans.Add(1)
		}
		return nil
	}}
	c := oldCollection(t, s, 42)
	if _, ok := c.(mnemo.Sequencer); !ok {
		t.Fatalf("%T is no mnemo.Sequencer", c)
	}
	ctx := context.Background()
	sp, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
	for want := int64(42); want < 45; want++ {
		if got, err := sp.Place(ctx, c, 1); err != nil || got != want {
			t.Fatalf("Place = %d, %v; want %d", got, err, want)
		}
	}
	if got := place(t, c); got != 45 {
		t.Fatalf("Place of another Space = %d, want 45", got)
	}
	if got, err := sp.Place(ctx, c, 3); err != nil || got != 46 {
		t.Fatalf("Place(3) = %d, %v; want 46", got, err)
	}
	if got := place(t, c); got != 49 {
		t.Fatalf("Place of a third Space = %d, want 49", got)
	}
	if n := scans.Load(); n != 1 {
		t.Fatalf("%d scans, want 1 (the first Place of the old collection)", n)
	}
}

// TestPlaceSequenceConcurrent: Spaces placing at once in a collection
// written before sequences, its sequence unset, start it once and never
// give two memories one position.
func TestPlaceSequenceConcurrent(t *testing.T) {
	c := oldCollection(t, memtest.Store(t), 10)
	const spaces, each = 4, 10
	got := make(chan int64, spaces*each)
	var wg sync.WaitGroup
	for range spaces {
		sp, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
		for range 2 { // two goroutines a Space
			wg.Go(func() {
				for range each / 2 {
					p, err := sp.Place(context.Background(), c, 1)
					if err != nil {
						t.Error(err)
						return
					}
					got <- p
				}
			})
		}
	}
	wg.Wait()
	close(got)
	seen := map[int64]bool{}
	for p := range got {
		if seen[p] || p < 10 {
			t.Fatalf("position %d given twice or taken by a stored memory (seen %v)", p, seen)
		}
		seen[p] = true
	}
	if len(seen) != spaces*each {
		t.Fatalf("%d positions, want %d", len(seen), spaces*each)
	}
}

// TestPlaceWithoutSequence: a collection that keeps no sequence (another
// backend's) is scanned once per Space and counted in it, as before
// sequences: two Spaces repeat positions.
func TestPlaceWithoutSequence(t *testing.T) {
	var scans atomic.Int64
	s := &memtest.Faulty{Store: memtest.Store(t), NoSequencer: true, Hook: func(_ context.Context, op, _ string) error {
		if op == "scan" {
			scans.Add(1)
		}
		return nil
	}}
	c := oldCollection(t, s, 42)
	if _, ok := c.(mnemo.Sequencer); ok {
		t.Fatalf("%T is a mnemo.Sequencer", c)
	}
	ctx := context.Background()
	sp, _ := textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
	for want := int64(42); want < 45; want++ {
		if got, err := sp.Place(ctx, c, 1); err != nil || got != want {
			t.Fatalf("Place = %d, %v; want %d", got, err, want)
		}
	}
	if got := place(t, c); got != 42 {
		t.Fatalf("Place of another Space = %d, want 42 (its own scan)", got)
	}
	if n := scans.Load(); n != 2 {
		t.Fatalf("%d scans, want 2 (one a Space)", n)
	}
}

// conversation is a single writer's memories, in order: the answer to a
// question often sits next to the memory that shares its words.
var conversation = []string{
	"I adopted a cat from the shelter last week",
	"She is grey with white paws",
	"We named her Pixel",
	"My sister lives in Lisbon",
	"She works as an architect there",
	"I plan to visit her in October",
	"The flight is booked for the twelfth",
	"I started learning the cello",
	"My teacher says my bowing improved",
	"The recital is in December",
	"Pixel sleeps on the cello case",
	"The architect designed a library",
}

// TestSpreadAsCounted: a single writer's memories get the positions each
// Space counted before collections kept a sequence (0, 1, 2, ... in the
// order stored, a second Space on the store going on from the first, as
// after a restart), so searches that spread scores to neighbours return
// what they return on a collection without a sequence, hit for hit.
func TestSpreadAsCounted(t *testing.T) {
	ctx := context.Background()
	half := len(conversation) / 2
	fill := func(s mnemo.Store) (*textvec.Space, *textvec.Bound) {
		var sp *textvec.Space
		var b *textvec.Bound
		for i, text := range conversation {
			if i == 0 || i == half { // a new Space and binding: another process
				sp, _ = textvec.New(nil, errEmpty, errInvalid, textvec.Observe{})
				var err error
				if b, err = sp.Bind(ctx, s, "conversation", "test"); err != nil {
					t.Fatal(err)
				}
			}
			v, err := sp.Vector(ctx, "text", text)
			if err != nil {
				t.Fatal(err)
			}
			// One conversation (the adapters stamp the group).
			rec := mnemo.Record{ID: fmt.Sprintf("m%02d", i), Vector: v, Content: text, Metadata: map[string]any{textvec.GroupField: ""}}
			if _, err := sp.Insert(ctx, b, rec); err != nil {
				t.Fatal(err)
			}
		}
		return sp, b
	}
	seqSpace, seq := fill(memtest.Store(t))
	countSpace, counted := fill(&memtest.Faulty{Store: memtest.Store(t), NoSequencer: true})
	if _, ok := seq.Get().(mnemo.Sequencer); !ok {
		t.Fatalf("%T is no mnemo.Sequencer", seq.Get())
	}
	for _, b := range []*textvec.Bound{seq, counted} {
		err := textvec.ScanPages(ctx, b.Get(), "", func(page []mnemo.Record) error {
			for _, r := range page {
				if p, want := r.Metadata[textvec.PosField], fmt.Sprintf("m%02.0f", r.Metadata[textvec.PosField]); want != r.ID {
					return fmt.Errorf("%s is at position %v", r.ID, p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ids := func(hits []mnemo.Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s %.6f", h.Record.ID, h.Score))
		}
		return out
	}
	spreadMatters := false
	for _, q := range []string{"what is the cat called", "where does my sister live", "when is the flight", "cello recital", "architect"} {
		got, err := seqSpace.Query(ctx, seq, textvec.Retrieval{}, q, 4, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := countSpace.Query(ctx, counted, textvec.Retrieval{}, q, 4, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("Query(%q) = %q, want %q (as counted)", q, ids(got), ids(want))
		}
		plain, err := seqSpace.Query(ctx, seq, textvec.Retrieval{Spread: new(float32(0))}, q, 4, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		spreadMatters = spreadMatters || !slices.Equal(ids(got), ids(plain))
	}
	if !spreadMatters {
		t.Fatal("no answer depends on spreading: the comparison shows nothing")
	}
}
