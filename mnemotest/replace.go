package mnemotest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
)

// testReplaceFromOne: a replaces a collection with another (mnemo.Replacer);
// b sees the new one under the old name, b's handle of the old one fails,
// a write of b that waits while final runs fails after the switch, and
// final's error replaces nothing.
func testReplaceFromOne(t *testing.T, a, b mnemo.Store) {
	ctx := context.Background()
	oldA := mustCreate(t, a, "facts", sharedCfg)
	mustUpsert(t, oldA, sharedRecords("1", "2")...)
	newCfg := sharedCfg
	newCfg.Embedder = "next"
	newA := mustCreate(t, a, "facts.next", newCfg)
	mustUpsert(t, newA, sharedRecords("n1")...)
	oldB, err := b.Collection(ctx, "facts")
	if err != nil {
		t.Fatal(err)
	}

	boom := errors.New("boom")
	if err := mnemo.ReplaceCollection(ctx, a, "facts", "facts.next", func(context.Context, mnemo.Collection, mnemo.Collection) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("final's error: %v", err)
	}
	if c, err := b.Collection(ctx, "facts"); err != nil || c.Config().Embedder != "" {
		t.Fatalf("a failed final replaced the collection: %v", err)
	}
	mustUpsert(t, oldB, sharedRecords("3")...) // writes go on after a failed replace

	late := make(chan error, 1)
	err = mnemo.ReplaceCollection(ctx, a, "facts", "facts.next", func(ctx context.Context, old, new mnemo.Collection) error {
		go func() {
			_, err := oldB.Upsert(ctx, sharedRecords("late")...)
			late <- err
		}()
		select {
		case err := <-late:
			return errors.New("a write went through while final ran: " + errorString(err))
		case <-time.After(200 * time.Millisecond):
		}
		n, err := old.Count(ctx) // final reads the old collection
		if err != nil || n != 3 {
			return errors.New("final counted the old collection wrong: " + errorString(err))
		}
		_, err = new.Upsert(ctx, sharedRecords("1", "2", "3")...) // and writes the new one
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-late; !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("the write that waited: %v, want ErrCollectionNotFound", err)
	}
	if _, err := oldB.Upsert(ctx, sharedRecords("4")...); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("a write through a handle of the replaced collection: %v", err)
	}
	c, err := b.Collection(ctx, "facts")
	if err != nil {
		t.Fatal(err)
	}
	if c.Config().Embedder != "next" {
		t.Fatalf("after the switch %q has embedder %q", "facts", c.Config().Embedder)
	}
	recs, _, err := c.Scan(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID)
	}
	if len(got) != 4 || got[0] != "1" || got[3] != "n1" {
		t.Fatalf("after the switch %q holds %v, want [1 2 3 n1]", "facts", got)
	}
	if names, err := b.Collections(ctx); err != nil || len(names) != 1 || names[0] != "facts" {
		t.Fatalf("collections after the switch: %v, %v", names, err)
	}
	if err := mnemo.ReplaceCollection(ctx, a, "facts", "facts", nil); err == nil {
		t.Fatal("a collection replaced itself")
	}
	if err := mnemo.ReplaceCollection(ctx, a, "facts", "none", nil); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("replacing with an absent collection: %v", err)
	}
}

func errorString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
