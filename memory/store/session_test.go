package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/scope"
)

// TestSessionsSpread: a match lifts the facts next to it in its own
// session, however sessions and scopes interleave in the collection and
// whatever the order they were stored in when positions are given;
// facts without a session neither lift nor are lifted.
func TestSessionsSpread(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	open := func(sc scope.Scope) *Semantic {
		// Text mode: only the facts that hold the query's words match.
		s, err := NewSemantic(ctx, db, &SemanticOptions{Scope: sc, SweepEvery: -1, Mode: mnemo.ModeText})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	all, alice, bob := open(nil), open(scope.Of("user", "alice")), open(scope.Of("user", "bob"))
	// Three conversations, "trip" in two scopes, written interleaved;
	// "notes" facts have no session. Only "zebra" matches the query.
	type fact struct {
		s       *Semantic
		session string
		pos     int64
		text    string
	}
	facts := []fact{
		{alice, "trip", 2, "alice trip two"},
		{bob, "trip", 0, "bob trip zero"},
		{all, "", 0, "notes one"},
		{all, "", 0, "misc item"},
		{alice, "trip", 0, "alice trip zero"},
		{bob, "trip", 1, "bob trip one zebra"},
		{alice, "trip", 1, "alice trip one"},
		{all, "", 0, "notes two"},
		{bob, "trip", 2, "bob trip two"},
		{alice, "work", 0, "alice work zero"},
		{bob, "trip", 3, "bob trip three"},
		{bob, "trip", 4, "bob trip four"},
	}
	for _, f := range facts {
		var o AddOptions
		if f.session != "" {
			o = AddOptions{Session: f.session, Position: &f.pos}
		}
		if _, err := f.s.AddWith(ctx, f.text, &o); err != nil {
			t.Fatal(err)
		}
	}
	texts := func(hs []Hit) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Text)
		}
		slices.Sort(out)
		return out
	}
	hs, err := all.SearchWith(ctx, "zebra", &SearchOptions{N: 10})
	if err != nil {
		t.Fatal(err)
	}
	// bob's trip at 1: 0 below; 2 and 3 above (window 2). Not alice's
	// trip, which shares the session's name, nor the notes.
	want := []string{"bob trip one zebra", "bob trip three", "bob trip two", "bob trip zero"}
	if got := texts(hs); !slices.Equal(got, want) {
		t.Fatalf("zebra: %q, want %q", got, want)
	}
	for _, h := range hs {
		if h.Session != "trip" || h.Scope["user"] != "bob" {
			t.Fatalf("hit %q: session %q, scope %v", h.Text, h.Session, h.Scope)
		}
	}
	// A fact without a session takes nothing from its neighbours in the
	// order of storage, and gives nothing.
	hs, err = all.SearchWith(ctx, "notes", &SearchOptions{N: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.Spread() {
			t.Fatalf("%q lifted by a fact without a session", h.Text)
		}
	}
	// Bad places are refused, and nothing is stored.
	for _, o := range []AddOptions{{Session: "a\x00b"}, {Session: strings.Repeat("s", 2000)}, {Session: "s", Position: new(int64(1 << 53))}} {
		if _, err := all.AddWith(ctx, "bad place", &o); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v: %v, want ErrInvalid", o, err)
		}
	}
	if _, err := NewSemantic(ctx, db, &SemanticOptions{Session: "\n"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a handle's bad session: %v", err)
	}
	// An update keeps the fact's session and place.
	f := hs[0]
	if err := all.Update(ctx, f.ID, f.Text+" again"); err != nil {
		t.Fatal(err)
	}
	g, _, err := all.Get(ctx, f.ID)
	if err != nil || g.Session != f.Session {
		t.Fatalf("after an update: session %q, want %q (%v)", g.Session, f.Session, err)
	}
	for _, k := range []string{"mnemo.group", "mnemo.session", "mnemo.pos"} {
		if _, ok := g.Metadata[k]; ok {
			t.Fatalf("%s shows in a fact's metadata", k)
		}
	}
}

// TestReplacesKeepsScope: a fact replaced through a handle of a
// narrower scope, or of none, keeps its own scope, session and place, so
// its owner still sees it.
func TestReplacesKeepsScope(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	open := func(o SemanticOptions) *Semantic {
		o.SweepEvery = -1
		s, err := NewSemantic(ctx, db, &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	wide := open(SemanticOptions{Scope: scope.Of("user", "alice", "agent", "planner"), Session: "S"})
	narrow := open(SemanticOptions{Scope: scope.Of("user", "alice")})
	admin := open(SemanticOptions{})
	id1, err := wide.Add(ctx, "alice likes green tea", nil)
	if err != nil {
		t.Fatal(err)
	}
	id2, err := wide.Add(ctx, "alice flies to Oslo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := narrow.AddWith(ctx, "alice likes black tea", &AddOptions{Replaces: id1}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddWith(ctx, "alice flies to Bergen", &AddOptions{Replaces: id2, Metadata: map[string]any{"k": 1}}); err != nil {
		t.Fatal(err)
	}
	for id, text := range map[string]string{id1: "alice likes black tea", id2: "alice flies to Bergen"} {
		f, ok, err := wide.Get(ctx, id)
		if err != nil || !ok {
			t.Fatalf("%s: the owner lost it (%v)", text, err)
		}
		if f.Text != text || f.Session != "S" || f.Scope["agent"] != "planner" {
			t.Fatalf("%s: %+v", text, f)
		}
	}
}
