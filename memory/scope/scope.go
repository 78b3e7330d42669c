// Package scope names whose memory an item is, so that one collection can
// hold the memories of many users, agents and sessions and every read sees
// only its own.
//
// A Scope is a set of named dimensions ("user", "agent", "session", or any
// other name) with a value each. A memory adapter given a scope stores it
// with every item it writes, in the item's metadata under
// "mnemo.scope.<dimension>", and applies it as a filter to every read: the
// filter runs inside the engine's graph walk (and in PostgreSQL's SQL), so
// a scoped read costs about what a read of a collection of its own would,
// and never sees another scope's items. An item matches a scope when it
// has every dimension of the scope with the same value; it may have more
// ({"user": "alice"} reads alice's items of every session).
//
// A handle without a scope reads every item, scoped or not, and writes
// unscoped items: cross-scope reads are what a handle asks for by having
// no scope (or, per call, by asking for all scopes).
package scope

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Scope maps a dimension name to its value, for example
// scope.Scope{"user": "alice", "session": "2026-12-04"}. A nil or empty
// Scope is no scope.
type Scope map[string]string

// Limits of a Scope.
const (
	// MaxDimensions is the most dimensions a Scope may have.
	MaxDimensions = 8
	// MaxNameLen and MaxValueLen bound a dimension's name and value, in
	// bytes.
	MaxNameLen  = 64
	MaxValueLen = 512
)

// Prefix starts the metadata key under which an item keeps a dimension of
// its scope: Prefix + name.
const Prefix = "mnemo.scope."

// ErrInvalid reports a Scope that breaks a rule of Validate.
var ErrInvalid = errors.New("scope: invalid scope")

// Of returns a Scope of name-value pairs: Of("user", "alice", "agent",
// "planner"). It panics on an odd number of arguments, as a program error.
func Of(pairs ...string) Scope {
	if len(pairs)%2 != 0 {
		panic("scope.Of: odd number of arguments")
	}
	s := make(Scope, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		s[pairs[i]] = pairs[i+1]
	}
	return s
}

// Validate checks s: at most MaxDimensions dimensions; each name of 1 to
// MaxNameLen ASCII letters, digits, '_' or '-'; each value non-empty,
// valid UTF-8 without NUL (which PostgreSQL cannot store), at most
// MaxValueLen bytes. A bad Scope wraps ErrInvalid.
func (s Scope) Validate() error {
	if len(s) > MaxDimensions {
		return fmt.Errorf("%w: %d dimensions, at most %d", ErrInvalid, len(s), MaxDimensions)
	}
	for _, name := range s.Names() {
		v := s[name]
		if name == "" || len(name) > MaxNameLen || strings.IndexFunc(name, badNameRune) >= 0 {
			return fmt.Errorf("%w: dimension name %q (want 1 to %d of a-z, A-Z, 0-9, _ and -)", ErrInvalid, name, MaxNameLen)
		}
		if v == "" || len(v) > MaxValueLen || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return fmt.Errorf("%w: dimension %s: value %q (want 1 to %d bytes of UTF-8 without NUL)", ErrInvalid, name, clip(v), MaxValueLen)
		}
	}
	return nil
}

func badNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
}

func clip(v string) string {
	if len(v) > 40 {
		return v[:40] + "..."
	}
	return v
}

// Names returns s's dimension names, sorted.
func (s Scope) Names() []string { return slices.Sorted(maps.Keys(s)) }

// With returns a copy of s with dimension name set to value.
func (s Scope) With(name, value string) Scope {
	out := maps.Clone(s)
	if out == nil {
		out = Scope{}
	}
	out[name] = value
	return out
}

// Metadata returns the metadata keys and values that store s with an
// item (Prefix + name: value); nil for no scope.
func (s Scope) Metadata() map[string]any {
	if len(s) == 0 {
		return nil
	}
	m := make(map[string]any, len(s))
	for name, v := range s {
		m[Prefix+name] = v
	}
	return m
}

// Filter returns the metadata filter that admits the items of s (every
// dimension of s with its value), in the engine's filter syntax; nil for
// no scope.
func (s Scope) Filter() map[string]any {
	return s.Metadata()
}

// FromMetadata returns the scope an item's metadata holds; nil for none.
func FromMetadata(meta map[string]any) Scope {
	var s Scope
	for k, v := range meta {
		name, ok := strings.CutPrefix(k, Prefix)
		str, isStr := v.(string)
		if !ok || !isStr {
			continue
		}
		if s == nil {
			s = Scope{}
		}
		s[name] = str
	}
	return s
}

// String renders s as "name=value,..." in name order, for logs and errors.
func (s Scope) String() string {
	var b strings.Builder
	for i, name := range s.Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", name, s[name])
	}
	return b.String()
}
