package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo/memory/docstore"
	"github.com/mnemodb/mnemo/memory/store"
)

// TestContract runs the store.Store contract on both memories, the fact
// store and the document store (in memory and in a directory): the same
// calls give the same results, and the errors the contract names are
// this package's sentinels in both, with nothing saved.
func TestContract(t *testing.T) {
	ctx := context.Background()
	open := map[string]func(t *testing.T) (store.Store, func() error){
		"Semantic": func(t *testing.T) (store.Store, func() error) {
			s, err := store.OpenSemantic("", nil)
			if err != nil {
				t.Fatal(err)
			}
			return s, s.Close
		},
		"docstore/memory": func(t *testing.T) (store.Store, func() error) {
			d, err := docstore.Open("", nil)
			if err != nil {
				t.Fatal(err)
			}
			return d, d.Close
		},
		"docstore/dir": func(t *testing.T) (store.Store, func() error) {
			d, err := docstore.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return d, d.Close
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			s, closeStore := open(t)
			defer closeStore()
			for _, tt := range []struct {
				content string
				want    error
			}{
				{"", store.ErrEmpty},
				{" \t\n", store.ErrEmpty},
				{"not UTF-8 \xff", store.ErrInvalid},
			} {
				if err := s.Store(ctx, tt.content); !errors.Is(err, tt.want) {
					t.Errorf("Store(%q) = %v, want %v", tt.content, err, tt.want)
				}
			}
			if all, err := s.ListAll(ctx); err != nil || len(all) != 0 {
				t.Fatalf("ListAll after refused stores = %q, %v; want nothing", all, err)
			}
			for i := range store.DefaultResults + 2 {
				if err := s.Store(ctx, fmt.Sprintf("note %d about the garden", i)); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := s.Search(ctx, "garden", 0); err != nil || len(got) != store.DefaultResults {
				t.Fatalf("Search(n=0) = %d results, %v; want DefaultResults (%d)", len(got), err, store.DefaultResults)
			}
			if got, err := s.Search(ctx, "garden", 3); err != nil || len(got) != 3 {
				t.Fatalf("Search(n=3) = %d results, %v", len(got), err)
			}
			all, err := s.ListAll(ctx)
			if err != nil || len(all) != store.DefaultResults+2 {
				t.Fatalf("ListAll = %d identifiers, %v", len(all), err)
			}
			// An identifier from ListAll deletes what it names; an absent
			// one is a no-op.
			if err := s.Delete(ctx, all[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, all[0]); err != nil {
				t.Fatalf("deleting an absent identifier: %v", err)
			}
			after, err := s.ListAll(ctx)
			if err != nil || len(after) != len(all)-1 || slices.Contains(after, all[0]) {
				t.Fatalf("ListAll after Delete(%q) = %q, %v", all[0], after, err)
			}
		})
	}
}
