package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo"
)

func replaceRecords(prefix string, n int) []mnemo.Record {
	recs := make([]mnemo.Record, n)
	for i := range recs {
		recs[i] = mnemo.Record{ID: fmt.Sprintf("%s%03d", prefix, i), Vector: []float32{1, float32(i), 0}, Content: prefix + " record"}
	}
	return recs
}

func ids(t *testing.T, c mnemo.Collection) []string {
	t.Helper()
	recs, _, err := c.Scan(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// TestReplaceCollection replaces a collection with another, checks that
// the new one answers under the old name before and after a power cut,
// that handles of the old one fail and handles of the new one go on, and
// that final's error replaces nothing.
func TestReplaceCollection(t *testing.T) {
	fs := vfs.NewCrashableMem()
	db := mustOpen(t, "db", &Options{FS: fs})
	s := db.Store()
	oldC := mustCollection(t, db, "facts", mnemo.CollectionConfig{Dimension: 3, Embedder: "old"})
	newC := mustCollection(t, db, "facts.next", mnemo.CollectionConfig{Dimension: 3, Embedder: "new"})
	oldC.Upsert(ctx, replaceRecords("a", 5)...)
	newC.Upsert(ctx, replaceRecords("b", 3)...)

	boom := errors.New("boom")
	if err := mnemo.ReplaceCollection(ctx, s, "facts", "facts.next", func(context.Context, mnemo.Collection, mnemo.Collection) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("final's error: %v", err)
	}
	if c, _ := db.Collection("facts"); c != oldC || len(ids(t, storeCollection{c})) != 5 {
		t.Fatal("a failed final replaced the collection")
	}
	var finalSaw int
	err := mnemo.ReplaceCollection(ctx, s, "facts", "facts.next", func(ctx context.Context, old, new mnemo.Collection) error {
		finalSaw, _ = old.Count(ctx)
		_, err := new.Upsert(ctx, replaceRecords("c", 1)...) // the catch-up
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if finalSaw != 5 {
		t.Fatalf("final saw %d records of the old collection", finalSaw)
	}
	check := func(db *DB, when string) {
		t.Helper()
		c, err := db.Collection("facts")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if got := fmt.Sprint(ids(t, storeCollection{c})); got != "[b000 b001 b002 c000]" || c.Config().Embedder != "new" {
			t.Fatalf("%s: facts holds %s, embedder %q", when, got, c.Config().Embedder)
		}
		if _, err := db.Collection("facts.next"); !errors.Is(err, mnemo.ErrCollectionNotFound) {
			t.Fatalf("%s: facts.next still there: %v", when, err)
		}
		if names := db.Collections(); fmt.Sprint(names) != "[facts]" {
			t.Fatalf("%s: collections %v", when, names)
		}
	}
	check(db, "after the replace")
	if _, err := oldC.Upsert(ctx, replaceRecords("z", 1)...); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("a write to the replaced collection: %v", err)
	}
	if _, err := newC.Upsert(ctx, replaceRecords("d", 1)...); err != nil || newC.Name() != "facts" {
		t.Fatalf("the new collection's handle: %v, name %q", err, newC.Name())
	}
	newC.Delete(ctx, "d000")
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	db.Close()
	db2 := mustOpen(t, "db", &Options{FS: crashed})
	defer db2.Close()
	check(db2, "after a power cut")

	if err := mnemo.ReplaceCollection(ctx, s, "facts", "facts", nil); err == nil {
		t.Fatal("a collection replaced itself")
	}
}

// TestReplaceCollectionWaitingWrite checks that a write to the old
// collection that waits while final runs fails after the switch instead
// of landing in the deleted collection.
func TestReplaceCollectionWaitingWrite(t *testing.T) {
	db := mustOpen(t, t.TempDir(), nil)
	defer db.Close()
	oldC := mustCollection(t, db, "facts", mnemo.CollectionConfig{Dimension: 3})
	mustCollection(t, db, "facts.next", mnemo.CollectionConfig{Dimension: 3})
	wrote := make(chan error, 1)
	err := db.ReplaceCollection(ctx, "facts", "facts.next", func(ctx context.Context, old, new *Collection) error {
		go func() {
			_, err := oldC.Upsert(ctx, replaceRecords("late", 1)...)
			wrote <- err
		}()
		select {
		case err := <-wrote:
			return fmt.Errorf("a write went through while final ran: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("the waiting write returned %v, want ErrCollectionNotFound", err)
	}
	c, _ := db.Collection("facts")
	if n := c.Count(); n != 0 {
		t.Fatalf("the late write landed: %d records", n)
	}
}

// TestReplaceCollectionClose closes the database while final runs and
// writes: nothing deadlocks, and the replace either happened or not.
func TestReplaceCollectionClose(t *testing.T) {
	db := mustOpen(t, t.TempDir(), nil)
	mustCollection(t, db, "facts", mnemo.CollectionConfig{Dimension: 3})
	mustCollection(t, db, "facts.next", mnemo.CollectionConfig{Dimension: 3})
	closing := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		res <- db.ReplaceCollection(ctx, "facts", "facts.next", func(ctx context.Context, old, new *Collection) error {
			close(closing)
			time.Sleep(50 * time.Millisecond) // Close is waiting by now
			_, err := new.Upsert(ctx, replaceRecords("c", 1)...)
			return err
		})
	}()
	<-closing
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-res:
		if err != nil && !errors.Is(err, mnemo.ErrClosed) {
			t.Fatalf("ReplaceCollection during Close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ReplaceCollection and Close deadlocked")
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close never returned")
	}
}

// TestReplaceCollectionCloseWithWaiter: while final runs, another caller
// waits for the catalog and Close begins; nothing deadlocks (a lock that
// blocks new operations while Close waits did).
func TestReplaceCollectionCloseWithWaiter(t *testing.T) {
	db := mustOpen(t, t.TempDir(), nil)
	mustCollection(t, db, "facts", mnemo.CollectionConfig{Dimension: 3})
	mustCollection(t, db, "facts.next", mnemo.CollectionConfig{Dimension: 3})
	in := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		res <- db.ReplaceCollection(ctx, "facts", "facts.next", func(ctx context.Context, old, new *Collection) error {
			close(in)
			time.Sleep(300 * time.Millisecond)
			return nil
		})
	}()
	<-in
	go db.Collection("facts")
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	for _, ch := range []chan error{res, closed} {
		select {
		case err := <-ch:
			if err != nil && !errors.Is(err, mnemo.ErrClosed) {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("ReplaceCollection, Collection and Close deadlocked")
		}
	}
}
