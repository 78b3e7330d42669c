// Package item keeps what the memory adapters store about an item beside
// its own metadata: its scope (package scope), its expiry and the history
// of its updates, all under reserved "mnemo." metadata keys, and builds
// the filter every read applies (the caller's filter, the scope, not
// expired).
package item

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
)

// Reserved metadata keys.
const (
	// ExpiresField holds the time an item expires, in Unix milliseconds.
	ExpiresField = "mnemo.expires"
	// HistoryField holds the item's updates, oldest first (see Change).
	HistoryField = "mnemo.history"
	// SessionField holds the session (a conversation) the item was
	// stored in, when it was given one.
	SessionField = "mnemo.session"
)

// Bounds of an item's history: at most MaxHistory changes and
// MaxHistoryBytes of JSON (oldest dropped first), each side of a change
// cut to MaxChangeText bytes (the item's metadata is bounded by
// mnemo.MaxMetadataBytes).
const (
	MaxHistory      = 64
	MaxHistoryBytes = 256 << 10
	MaxChangeText   = 16 << 10
)

// Reserved reports whether key is one the adapters keep for themselves.
func Reserved(key string) bool {
	switch key {
	case textvec.PosField, textvec.GroupField, SessionField, ExpiresField, HistoryField:
		return true
	}
	return strings.HasPrefix(key, scope.Prefix)
}

// Place is where an item sits for neighbour spreading: its session (a
// conversation; "" for none) and its position in it (nil: the order in
// which the collection stores it).
type Place struct {
	Session  string
	Position *int64
}

// MaxSession bounds a session's length in bytes.
const MaxSession = 1 << 10

// Check refuses a session that is not valid UTF-8, holds a control
// character or is longer than MaxSession, and a position outside
// (-mnemo.MaxPosition, mnemo.MaxPosition), wrapping invalid.
func (p Place) Check(invalid error) error {
	if len(p.Session) > MaxSession {
		return fmt.Errorf("%w: session of %d bytes, want at most %d", invalid, len(p.Session), MaxSession)
	}
	if !utf8.ValidString(p.Session) || strings.ContainsFunc(p.Session, unicode.IsControl) {
		return fmt.Errorf("%w: session %q: want UTF-8 text without control characters", invalid, p.Session)
	}
	if p.Position != nil && (*p.Position <= -mnemo.MaxPosition || *p.Position >= mnemo.MaxPosition) {
		return fmt.Errorf("%w: position %d, want an integer of magnitude below 2^53", invalid, *p.Position)
	}
	return nil
}

// PlaceOf returns the checked place (see Check) of an item stored in
// session, or in fallback (the handle's) when session is "", at
// position.
func PlaceOf(invalid error, session, fallback string, position *int64) (Place, error) {
	p := Place{Session: session, Position: position}
	if p.Session == "" {
		p.Session = fallback
	}
	return p, p.Check(invalid)
}

// Group is the conversation an item of scope s stored in session belongs
// to, the value of textvec.GroupField: the session itself for an item
// without a scope, else the scope and the session, so that two scopes'
// sessions of one name are two conversations.
func Group(s scope.Scope, session string) string {
	if len(s) == 0 {
		return session
	}
	pairs := make([][2]string, 0, len(s))
	for _, name := range s.Names() {
		pairs = append(pairs, [2]string{name, s[name]})
	}
	b, _ := json.Marshal(pairs) // strings only: cannot fail
	return string(b) + "\x1f" + session
}

// StampPlace adds p to meta (changed in place; the item's scope is s):
// the session, and the position when p has one. The group is added when
// the item has a session or when always is set: an adapter whose every
// item is a turn of a conversation (the handle's, when no session is
// given) spreads always; a fact store only among the facts stored with a
// session.
func StampPlace(meta map[string]any, s scope.Scope, p Place, always bool) {
	if p.Session != "" {
		meta[SessionField] = p.Session
	}
	if p.Session != "" || always {
		meta[textvec.GroupField] = Group(s, p.Session)
	}
	if p.Position != nil {
		meta[textvec.PosField] = *p.Position
	}
}

// Position returns an item's place in its session, as stored (from the
// collection's sequence or given); nil when it has none.
func Position(meta map[string]any) *int64 {
	v, ok := mnemo.FilterValue(meta[textvec.PosField])
	p, isNum := v.(float64)
	if !ok || !isNum || p != math.Trunc(p) || math.Abs(p) >= mnemo.MaxPosition {
		return nil
	}
	return new(int64(p))
}

// Session returns the session an item with metadata meta was stored in.
func Session(meta map[string]any) string {
	s, _ := meta[SessionField].(string)
	return s
}

// CheckMeta refuses metadata that sets a reserved key, wrapping invalid.
func CheckMeta(invalid error, meta map[string]any) error {
	for k := range meta {
		if Reserved(k) {
			return fmt.Errorf("%w: metadata key %q is reserved", invalid, k)
		}
	}
	return nil
}

// Stamp returns a copy of meta with the scope and, when expires is not
// zero, the expiry added.
func Stamp(meta map[string]any, s scope.Scope, expires time.Time) map[string]any {
	out := make(map[string]any, len(meta)+len(s)+1)
	maps.Copy(out, meta)
	maps.Copy(out, s.Metadata())
	if !expires.IsZero() {
		out[ExpiresField] = expires.UnixMilli()
	}
	return out
}

// Strip returns meta without the reserved keys, nil when nothing is left.
// meta is not changed.
func Strip(meta map[string]any) map[string]any {
	var out map[string]any
	for k, v := range meta {
		if Reserved(k) {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(meta))
		}
		out[k] = v
	}
	return out
}

// Expires returns the time an item with metadata meta expires; zero for
// never.
func Expires(meta map[string]any) time.Time {
	v, ok := mnemo.FilterValue(meta[ExpiresField])
	ms, isNum := v.(float64)
	if !ok || !isNum {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

// Expired reports whether an item with metadata meta has expired at now.
func Expired(meta map[string]any, now time.Time) bool {
	t := Expires(meta)
	return !t.IsZero() && !t.After(now)
}

// Read is what one read admits.
type Read struct {
	// Scope the items must have (nil: any); ignored when AllScopes.
	Scope     scope.Scope
	AllScopes bool
	// Now, when not zero, drops the items expired at Now.
	Now time.Time
	// Where is the caller's filter over the items' metadata (nil: none).
	Where map[string]any
}

// Filter builds r's filter, wrapping a bad caller filter in invalid.
// A filter naming a reserved key is refused: scopes and expiry are the
// handle's to apply.
func (r Read) Filter(invalid error) (*mnemo.Filter, error) {
	var parts []any
	if len(r.Where) > 0 {
		if err := checkFilterKeys(invalid, r.Where, 0); err != nil {
			return nil, err
		}
		parts = append(parts, r.Where)
	}
	if !r.AllScopes && len(r.Scope) > 0 {
		parts = append(parts, r.Scope.Filter())
	}
	if !r.Now.IsZero() {
		parts = append(parts, NotExpired(r.Now))
	}
	var m map[string]any
	switch len(parts) {
	case 0:
		return nil, nil
	case 1:
		m = parts[0].(map[string]any)
	default:
		m = map[string]any{"$and": parts}
	}
	f, err := mnemo.NewFilter(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", invalid, err)
	}
	return f, nil
}

// NotExpired is the filter that admits the items not expired at now.
func NotExpired(now time.Time) map[string]any {
	return map[string]any{"$or": []any{
		map[string]any{ExpiresField: map[string]any{"$exists": false}},
		map[string]any{ExpiresField: map[string]any{"$gt": now.UnixMilli()}},
	}}
}

// ExpiredBy is the filter that admits the items expired at now.
func ExpiredBy(now time.Time) map[string]any {
	return map[string]any{ExpiresField: map[string]any{"$lte": now.UnixMilli()}}
}

// checkFilterKeys refuses a filter that names a reserved key at any depth.
func checkFilterKeys(invalid error, v any, depth int) error {
	if depth > mnemo.MaxFilterDepth {
		return nil // NewFilter reports the depth
	}
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if Reserved(k) {
				return fmt.Errorf("%w: filter names the reserved key %q", invalid, k)
			}
			if err := checkFilterKeys(invalid, sub, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, sub := range x {
			if err := checkFilterKeys(invalid, sub, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// Change is one update of an item: its content before and after, and
// when.
type Change struct {
	Old string
	New string
	At  time.Time
}

// History returns the changes an item's metadata records, oldest first.
// The metadata holds them as a list of {"old", "new", "at"} objects ("at"
// in RFC 3339 with nanoseconds), as the store returns it.
func History(meta map[string]any) []Change {
	list, ok := meta[HistoryField].([]any)
	if !ok {
		return nil
	}
	out := make([]Change, 0, len(list))
	for _, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		var c Change
		c.Old, _ = m["old"].(string)
		c.New, _ = m["new"].(string)
		if at, ok := m["at"].(string); ok {
			c.At, _ = time.Parse(time.RFC3339Nano, at)
		}
		out = append(out, c)
	}
	return out
}

// WithChange returns a copy of meta whose history ends with c, within the
// bounds above: the newest changes are kept, and a side of c longer than
// MaxChangeText is cut (at a rune boundary) and marked with "…". The
// whole metadata is then kept under mnemo.MaxMetadataBytes by dropping
// the oldest changes, all of them if the item's own metadata needs the
// room: an update never fails for its history.
func WithChange(meta map[string]any, c Change) map[string]any {
	c.Old, c.New = cut(c.Old), cut(c.New)
	h := append(History(meta), c)
	if len(h) > MaxHistory {
		h = h[len(h)-MaxHistory:]
	}
	out := maps.Clone(meta)
	if out == nil {
		out = map[string]any{}
	}
	delete(out, HistoryField)
	rest := jsonSize(out)
	for len(h) > 0 {
		list := historyList(h)
		if n := jsonSize(list); n <= MaxHistoryBytes && rest+n+len(HistoryField)+8 <= mnemo.MaxMetadataBytes {
			out[HistoryField] = list
			return out
		}
		h = h[1:]
	}
	return out
}

func historyList(h []Change) []any {
	list := make([]any, len(h))
	for i, c := range h {
		list[i] = map[string]any{"old": c.Old, "new": c.New, "at": c.At.UTC().Format(time.RFC3339Nano)}
	}
	return list
}

// jsonSize is the length of v's JSON encoding (0 if it has none).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

func cut(s string) string {
	if len(s) <= MaxChangeText {
		return s
	}
	i := MaxChangeText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
