package mnemotest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo"
)

// testConditional: UpsertIf and DeleteIf write only what their condition
// admits of what the IDs hold, and two writers racing for one absent ID
// never both win.
func testConditional(t *testing.T, s mnemo.Store) {
	ctx := context.Background()
	c := mustCreate(t, s, "cond", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2, Index: mnemo.Flat})
	cc, ok := c.(mnemo.Conditional)
	if !ok {
		t.Fatalf("%T is not a mnemo.Conditional", c)
	}
	rec := func(id, owner string) mnemo.Record {
		return mnemo.Record{ID: id, Vector: []float32{1, 2}, Content: owner, Metadata: map[string]any{"owner": owner}}
	}
	absent := func(exists bool, _ map[string]any) bool { return !exists }
	ownedBy := func(o string) func(bool, map[string]any) bool {
		return func(exists bool, m map[string]any) bool { return !exists || m["owner"] == o }
	}
	mustUpsert(t, c, rec("a", "alice"))
	ids, err := cc.UpsertIf(ctx, absent, rec("a", "bob"), rec("b", "bob"))
	if err != nil || fmt.Sprint(ids) != "[b]" {
		t.Fatalf("UpsertIf(absent) = %v, %v; want [b]", ids, err)
	}
	ids, err = cc.UpsertIf(ctx, ownedBy("bob"), rec("a", "bob"), rec("b", "bob"), rec("c", "bob"))
	if err != nil || fmt.Sprint(ids) != "[b c]" {
		t.Fatalf("UpsertIf(owned by bob) = %v, %v; want [b c]", ids, err)
	}
	if r, _, _ := c.Get(ctx, "a"); r.Content != "alice" {
		t.Fatalf("a was overwritten: %q", r.Content)
	}
	if ids, err := cc.UpsertIf(ctx, absent, rec("a", "x")); err != nil || len(ids) != 0 {
		t.Fatalf("UpsertIf writing nothing = %v, %v", ids, err)
	}
	if _, err := cc.UpsertIf(ctx, nil, mnemo.Record{Vector: []float32{1, 2}}); !errors.Is(err, mnemo.ErrInvalidRecord) {
		t.Fatalf("UpsertIf without an ID: %v", err)
	}
	n, err := cc.DeleteIf(ctx, func(m map[string]any) bool { return m["owner"] == "bob" }, "a", "b", "c", "missing")
	if err != nil || n != 2 {
		t.Fatalf("DeleteIf(owner bob) = %d, %v; want 2", n, err)
	}
	if _, ok, _ := c.Get(ctx, "a"); !ok {
		t.Fatal("DeleteIf deleted alice's record")
	}
	// Racing for an absent ID: exactly one writer wins each round.
	for round := range 20 {
		id := fmt.Sprint("race", round)
		var wg sync.WaitGroup
		won := make([]bool, 4)
		for w := range won {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids, err := cc.UpsertIf(ctx, absent, rec(id, fmt.Sprint("w", w)))
				if err != nil {
					t.Error(err)
				}
				won[w] = len(ids) == 1
			}()
		}
		wg.Wait()
		winners := 0
		for _, w := range won {
			if w {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d writers won an absent ID", round, winners)
		}
	}
}
