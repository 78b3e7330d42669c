package vectorstore

import (
	"context"
	"errors"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/scope"
)

// TestScopes: two scoped Stores on one collection search, delete and
// count only their own documents, a forged scope key is overwritten, a
// filter narrows within the scope, and the unscoped Store sees all.
func TestScopes(t *testing.T) {
	ctx := context.Background()
	all, err := Open("", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	alice, err := all.WithScope(scope.Of("user", "alice"))
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := all.WithScope(scope.Of("user", "bob"))
	if _, err := alice.Add(ctx, []Doc{{ID: "a1", Text: "the invoice is due on Friday", Metadata: map[string]any{"kind": "bill"}}, {ID: "a2", Text: "the invoice for rent", Metadata: map[string]any{"kind": "rent"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Add(ctx, []Doc{{ID: "b1", Text: "the invoice is paid", Metadata: map[string]any{"mnemo.scope.user": "alice"}}}); err != nil {
		t.Fatal(err)
	}
	ids := func(s *Store, f *mnemo.Filter) []string {
		hits, err := s.Search(ctx, Search{Text: "invoice", K: 10, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.Record.ID)
		}
		return out
	}
	if got := ids(bob, nil); len(got) != 1 || got[0] != "b1" {
		t.Fatalf("bob finds %v (a forged scope key must not move his document to alice)", got)
	}
	if got := ids(alice, nil); len(got) != 2 {
		t.Fatalf("alice finds %v", got)
	}
	rent, _ := FilterOf(map[string]any{"kind": "rent"})
	if got := ids(alice, rent); len(got) != 1 || got[0] != "a2" {
		t.Fatalf("alice's filtered search finds %v", got)
	}
	if got := ids(all, nil); len(got) != 3 {
		t.Fatalf("the unscoped Store finds %v", got)
	}
	if n, err := bob.Delete(ctx, "a1", "b1"); err != nil || n != 1 {
		t.Fatalf("bob's Delete = %d, %v; want 1 (his own)", n, err)
	}
	if n, _ := alice.Count(ctx); n != 2 {
		t.Fatalf("alice counts %d", n)
	}
	if n, _ := all.Count(ctx); n != 2 {
		t.Fatalf("the unscoped Store counts %d", n)
	}
	// Another scope's ID cannot be replaced, and raw records cannot carry
	// another scope in.
	if _, err := alice.Add(ctx, []Doc{{ID: "b1x", Text: "seed"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Add(ctx, []Doc{{ID: "b1x", Text: "bob overwrites"}}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bob replaced alice's document: %v", err)
	}
	recs, _ := alice.Records(ctx, []Doc{{ID: "x1", Text: "injected invoice"}})
	recs[0].Metadata = map[string]any{"mnemo.scope.user": "bob"}
	if _, err := alice.Upsert(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	if got := ids(bob, nil); len(got) != 0 {
		t.Fatalf("a raw record carried alice's document into bob's scope: %v", got)
	}
	// Documents without IDs get new ones in a scoped Store too.
	if ids, err := alice.Add(ctx, []Doc{{Text: "an invoice without an id"}}); err != nil || len(ids) != 1 || ids[0] == "" {
		t.Fatalf("a scoped Add without an ID: %v, %v", ids, err)
	}
	if _, err := all.WithScope(scope.Scope{"bad name": "x"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a bad scope: %v", err)
	}
}
