package chat

import (
	"context"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/scope"
)

func texts(r QueryResult) []string {
	var out []string
	for _, c := range r.Results {
		out = append(out, c.Content.(string))
	}
	return out
}

// TestVectorScopes: two users share a collection; each handle queries,
// deletes and clears only its own contents; the unscoped handle sees both.
func TestVectorScopes(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	open := func(s scope.Scope) *VectorMemory {
		v, err := NewVector(ctx, db, &VectorOptions{K: 10, Scope: s, SweepEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		return v
	}
	alice, bob, all := open(scope.Of("user", "alice")), open(scope.Of("user", "bob")), open(nil)
	aid, err := alice.AddWith(ctx, Content{Content: "my favourite language is Go", MimeType: TextPlain}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bid, _ := bob.AddWith(ctx, Content{Content: "my favourite language is Rust", MimeType: TextPlain}, nil)
	if got := texts(must(alice.Query(ctx, "favourite language"))); len(got) != 1 || got[0] != "my favourite language is Go" {
		t.Fatalf("alice queries %q", got)
	}
	if got := texts(must(all.Query(ctx, "favourite language"))); len(got) != 2 {
		t.Fatalf("the unscoped handle queries %q", got)
	}
	if err := alice.Delete(ctx, bid); err != nil {
		t.Fatal(err)
	}
	if err := alice.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got := texts(must(bob.Query(ctx, "favourite language"))); len(got) != 1 {
		t.Fatalf("alice's Delete or Clear reached bob's content: %q", got)
	}
	if got := texts(must(all.Query(ctx, "favourite language"))); len(got) != 1 || got[0] != "my favourite language is Rust" {
		t.Fatalf("after alice's Clear: %q", got)
	}
	if err := alice.Delete(ctx, aid); err != nil {
		t.Fatal(err)
	}
	if err := bob.Delete(ctx, bid); err != nil {
		t.Fatal(err)
	}
	if got := texts(must(all.Query(ctx, "favourite language"))); len(got) != 0 {
		t.Fatalf("after bob's Delete: %q", got)
	}
}

// TestVectorExpiry: a TTL hides expired contents at once, and Sweep
// deletes them.
func TestVectorExpiry(t *testing.T) {
	ctx := context.Background()
	clock := memtest.NewClock(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	v, err := NewVector(ctx, memtest.Store(t), &VectorOptions{K: 10, TTL: time.Hour, Clock: clock.Now, SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Add(ctx, Content{Content: "the meeting is in room 4", MimeType: TextPlain})
	v.AddWith(ctx, Content{Content: "the meeting moved to room 7", MimeType: TextPlain}, &AddOptions{ExpiresAt: clock.Now().Add(3 * time.Hour)})
	clock.Advance(2 * time.Hour)
	if got := texts(must(v.Query(ctx, "meeting room"))); len(got) != 1 || got[0] != "the meeting moved to room 7" {
		t.Fatalf("after the TTL: %q", got)
	}
	if n, err := v.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	clock.Advance(2 * time.Hour)
	if got := texts(must(v.Query(ctx, "meeting room"))); len(got) != 0 {
		t.Fatalf("after its own expiry: %q", got)
	}
}

func must(r QueryResult, err error) QueryResult {
	if err != nil {
		panic(err)
	}
	return r
}
