package scope

import (
	"errors"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

func TestValidate(t *testing.T) {
	good := []Scope{nil, {}, Of("user", "alice"), Of("user", "ä", "session-1", "x", "agent_2", strings.Repeat("v", MaxValueLen))}
	for _, s := range good {
		if err := s.Validate(); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
	many := Scope{}
	for i := range MaxDimensions + 1 {
		many[string(rune('a'+i))] = "x"
	}
	bad := []Scope{{"": "x"}, {"user": ""}, {"us er": "x"}, {"user.id": "x"}, {"user": "\xff"}, {"user": "a\x00b"},
		{strings.Repeat("n", MaxNameLen+1): "x"}, {"user": strings.Repeat("v", MaxValueLen+1)}, many}
	for _, s := range bad {
		if err := s.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", s, err)
		}
	}
}

// TestFilterAdmits checks that a scope's filter admits exactly the
// metadata of its items and of narrower scopes.
func TestFilterAdmits(t *testing.T) {
	s := Of("user", "alice")
	f, err := mnemo.NewFilter(s.Filter())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		meta map[string]any
		want bool
	}{
		{Of("user", "alice").Metadata(), true},
		{Of("user", "alice", "session", "s1").Metadata(), true},
		{Of("user", "bob").Metadata(), false},
		{nil, false},
		{map[string]any{"user": "alice"}, false}, // the user's own key is not the scope
	}
	for _, c := range cases {
		if got := f.Match(c.meta); got != c.want {
			t.Errorf("Match(%v) = %v, want %v", c.meta, got, c.want)
		}
	}
	if got := FromMetadata(Of("user", "alice", "agent", "a").Metadata()); got.String() != "agent=a,user=alice" {
		t.Fatalf("FromMetadata = %v", got)
	}
	if (Scope(nil)).Filter() != nil || FromMetadata(map[string]any{"x": 1}) != nil {
		t.Fatal("no scope should have no filter and no metadata")
	}
	if w := s.With("session", "s2"); len(s) != 1 || w["session"] != "s2" || w["user"] != "alice" {
		t.Fatalf("With changed its receiver or lost a dimension: %v, %v", s, w)
	}
}
