package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// TestUnstorableStrings: names, IDs and scan positions that PostgreSQL
// text cannot hold (U+0000, invalid UTF-8) get the engine's answers, not
// a server error: lookups find nothing and scans start where the engine's
// do, in byte order.
func TestUnstorableStrings(t *testing.T) {
	ctx := context.Background()
	s := openFresh(t)
	defer s.Close()
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ref := db.Store()
	cfg := mnemo.CollectionConfig{Dimension: 2}
	var got, want mnemo.Collection
	for _, st := range []struct {
		s mnemo.Store
		c *mnemo.Collection
	}{{s, &got}, {ref, &want}} {
		c, err := st.s.CreateCollection(ctx, "c", cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", "aa", "a\x01", "b", "é", "éa", "\u007f", "\u0080", "日本", "\U0010ffff"} {
			if _, err := c.Upsert(ctx, mnemo.Record{ID: id, Vector: []float32{1, 1}}); err != nil {
				t.Fatal(err)
			}
		}
		*st.c = c
	}
	bad := []string{"a\x00", "a\x00b", "\x00", "\xff", "a\xffb", "\xc3", "é\xff", "\xc3\xa9\x80", "\xf4\x90\x80\x80", "\xed\xa0\x80"}
	for _, after := range append(bad, "", "a", "é") {
		g, gnext, gerr := got.Scan(ctx, after, 3)
		w, wnext, werr := want.Scan(ctx, after, 3)
		if gerr != nil || werr != nil || !slices.Equal(recordIDs(g), recordIDs(w)) || gnext != wnext {
			t.Errorf("Scan(%q) = %q, %q, %v; the engine %q, %q, %v", after, recordIDs(g), gnext, gerr, recordIDs(w), wnext, werr)
		}
	}
	for _, id := range bad {
		_, gok, gerr := got.Get(ctx, id)
		_, wok, werr := want.Get(ctx, id)
		if gok != wok || !errors.Is(gerr, mnemo.ErrInvalidID) && gerr != nil || (gerr == nil) != (werr == nil) {
			t.Errorf("Get(%q) = %v, %v; the engine %v, %v", id, gok, gerr, wok, werr)
		}
		gn, gerr := got.Delete(ctx, id, "absent")
		wn, werr := want.Delete(ctx, id, "absent")
		if gn != wn || (gerr == nil) != (werr == nil) || gerr != nil && !errors.Is(gerr, mnemo.ErrInvalidID) {
			t.Errorf("Delete(%q) = %d, %v; the engine %d, %v", id, gn, gerr, wn, werr)
		}
		if _, err := s.Collection(ctx, id); !errors.Is(err, mnemo.ErrCollectionNotFound) {
			t.Errorf("Collection(%q): %v, want ErrCollectionNotFound", id, err)
		}
		if err := s.DropCollection(ctx, id); !errors.Is(err, mnemo.ErrCollectionNotFound) {
			t.Errorf("DropCollection(%q): %v, want ErrCollectionNotFound", id, err)
		}
		if _, err := got.Upsert(ctx, mnemo.Record{ID: id, Vector: []float32{1, 1}}); err == nil {
			t.Errorf("Upsert(%q) succeeded", id)
		}
	}
}

func recordIDs(recs []mnemo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}
