package mnemo

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/internal/limitest"
)

func TestFilterMatch(t *testing.T) {
	meta := map[string]any{
		"source": "web", "year": 2021.0, "score": 0.5, "draft": false, "tags": []any{"x"},
		"lang": "en", "n": 3, // an int, as a Go caller might store before encoding
	}
	tests := []struct {
		filter string
		want   bool
	}{
		{`{}`, true},
		{`{"source": "web"}`, true},
		{`{"source": "book"}`, false},
		{`{"source": {"$eq": "web"}}`, true},
		{`{"year": 2021}`, true},
		{`{"year": "2021"}`, false},
		{`{"n": 3}`, true},
		{`{"year": {"$gt": 2020}}`, true},
		{`{"year": {"$gt": 2021}}`, false},
		{`{"year": {"$gte": 2021}}`, true},
		{`{"year": {"$lt": 2021}}`, false},
		{`{"year": {"$lte": 2021}}`, true},
		{`{"lang": {"$gt": "de"}}`, true},
		{`{"lang": {"$lt": "de"}}`, false},
		{`{"year": {"$gt": "a"}}`, false},
		{`{"missing": {"$gt": 1}}`, false},
		{`{"lang": {"$ne": "fr"}}`, true},
		{`{"lang": {"$ne": "en"}}`, false},
		{`{"missing": {"$ne": "x"}}`, true},
		{`{"lang": {"$in": ["fr", "en"]}}`, true},
		{`{"lang": {"$in": ["fr"]}}`, false},
		{`{"lang": {"$nin": ["fr"]}}`, true},
		{`{"lang": {"$nin": ["en"]}}`, false},
		{`{"missing": {"$nin": ["en"]}}`, true},
		{`{"draft": false}`, true},
		{`{"draft": {"$exists": true}}`, true},
		{`{"missing": {"$exists": false}}`, true},
		{`{"missing": {"$exists": true}}`, false},
		{`{"tags": "x"}`, false},
		{`{"source": "web", "year": 2020}`, false},
		{`{"$and": [{"source": "web"}, {"year": {"$gte": 2000}}]}`, true},
		{`{"$or": [{"source": "book"}, {"lang": "en"}]}`, true},
		{`{"$or": [{"source": "book"}, {"lang": "fr"}]}`, false},
		{`{"$and": [{"$or": [{"a": 1}, {"score": {"$lt": 1}}]}, {"draft": {"$ne": true}}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Match(meta); got != tt.want {
				t.Fatalf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct{ filter, want string }{
		{`[1]`, "want a JSON object"},
		{`{"a": 1} x`, "trailing data"},
		{`{"a": {"$gt": 1, "$lt": 2}}`, "filter.a: want exactly one operator"},
		{`{"a": {"$foo": 1}}`, "filter.a.$foo: unknown operator"},
		{`{"a": {"$gt": true}}`, "want a number or a string"},
		{`{"a": {"$in": 3}}`, "filter.a.$in: want a list"},
		{`{"a": {"$in": [{"b": 1}]}}`, "filter.a.$in[0]: want a string, number, boolean or null"},
		{`{"a": {"$exists": 1}}`, "want true or false"},
		{`{"$and": []}`, "filter.$and: want a non-empty list"},
		{`{"$and": [1]}`, "filter.$and[0]: want an object"},
		{`{"$or": [{"a": 1}, {}]}`, "filter.$or[1]: empty object"},
		{`{"$not": {"a": 1}}`, "unknown combinator"},
		{`{"": 1}`, "empty field name"},
		{`{"a": [1, 2]}`, "want a string, number, boolean or null, got a list"},
		{`{"a"`, "bad filter"},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			_, err := ParseFilter(tt.filter)
			if !errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrBadFilter mentioning %q", err, tt.want)
			}
		})
	}
}

// nestAnd returns a filter of n nested $and around inner.
func nestAnd(n int, inner map[string]any) map[string]any {
	m := inner
	for i := 0; i < n; i++ {
		m = map[string]any{"$and": []any{m}}
	}
	return m
}

// nestAndText is nestAnd as JSON text.
func nestAndText(n int, inner string) string {
	return strings.Repeat(`{"$and": [`, n) + inner + strings.Repeat("]}", n)
}

// TestFilterLimits checks the nesting and size limits of filters, built
// from Go values and parsed from text alike, and that neither a cycle nor
// a deep or exponentially shared filter costs more than a bounded walk.
func TestFilterLimits(t *testing.T) {
	eq := func() map[string]any { return map[string]any{"a": map[string]any{"$eq": 1.0}} }
	in := func() map[string]any { return map[string]any{"a": map[string]any{"$in": []any{1.0}}} }
	deep65 := "filter" + strings.Repeat(".$and[0]", 31) + ".a.$in: nested deeper than 64 levels"
	self := map[string]any{}
	self["$and"] = []any{self}
	twice := map[string]any{}
	twice["$or"] = []any{twice, twice}
	shared := map[string]any{"a": 1.0}
	for i := 0; i < 31; i++ {
		shared = map[string]any{"$and": []any{shared, shared}} // 2^31 leaves
	}
	tests := []struct {
		name  string
		parse func() (*Filter, error)
		want  string // a part of the error; "" when accepted
	}{
		{"Go value 64 levels deep", func() (*Filter, error) { return NewFilter(nestAnd(31, eq())) }, ""},
		{"text 64 levels deep", func() (*Filter, error) { return ParseFilter(nestAndText(31, `{"a": {"$eq": 1}}`)) }, ""},
		{"Go value 65 levels deep", func() (*Filter, error) { return NewFilter(nestAnd(31, in())) }, deep65},
		{"text 65 levels deep", func() (*Filter, error) { return ParseFilter(nestAndText(31, `{"a": {"$in": [1]}}`)) }, deep65},
		{"20,000 nested $and", func() (*Filter, error) { return NewFilter(nestAnd(20_000, eq())) }, "nested deeper than 64 levels"},
		{"text of 4,000 nested $and", func() (*Filter, error) { return ParseFilter(nestAndText(4_000, `{"a": 1}`)) }, "nested deeper than 64 levels"},
		{"text of 100,000 nested $and", func() (*Filter, error) { return ParseFilter(nestAndText(100_000, `{"a": 1}`)) }, "nested deeper than 64 levels"},
		{"unterminated text nested deep", func() (*Filter, error) { return ParseFilter(strings.Repeat(`{"$or": [`, 100_000)) }, "nested deeper than 64 levels"},
		{"brackets in strings do not nest", func() (*Filter, error) {
			return ParseFilter(`{"$and": [{"a": "` + strings.Repeat(`[{\"`, 100) + `"}]}`)
		}, ""},
		{"deep value under $in", func() (*Filter, error) {
			return NewFilter(map[string]any{"a": map[string]any{"$in": []any{limitest.NestLists(100)}}})
		}, "filter.a.$in[0].l" + strings.Repeat("[0]", 60) + ": nested deeper than 64 levels"},
		{"filter containing itself", func() (*Filter, error) { return NewFilter(self) }, "nested deeper than 64 levels"},
		{"filter containing itself twice", func() (*Filter, error) { return NewFilter(twice) }, "nested deeper than 64 levels"},
		{"shared sub-filters", func() (*Filter, error) { return NewFilter(shared) }, fmt.Sprintf("more than %d values", MaxFilterValues)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *Filter
			var err error
			alloc := limitest.Bounded(tt.name, func() { f, err = tt.parse() })
			if alloc > limitest.SmallAlloc {
				t.Errorf("allocated %d MB", alloc>>20)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("rejected: %.300v", err)
				}
				if f.IsEmpty() || (strings.Contains(tt.name, "64") && !f.Match(map[string]any{"a": 1.0})) {
					t.Fatalf("accepted filter does not work")
				}
				return
			}
			if !errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %.300v, want ErrBadFilter mentioning %q", err, tt.want)
			}
		})
	}
}

// TestParseFilterEmpty pins the documented contract callers rely on (the
// CLI passes an unset --filter through): empty text admits everything.
func TestParseFilterEmpty(t *testing.T) {
	tests := []struct {
		name, text string
		empty      bool
	}{
		{"empty", "", true},
		{"JSON whitespace", " \t\r\n", true},
		{"empty object", " {} ", true},
		{"no-break space is not JSON", "\u00a0", false},
		{"next line is not JSON", "\u0085", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(tt.text)
			if !tt.empty {
				if !errors.Is(err, ErrBadFilter) {
					t.Fatalf("err = %v, want ErrBadFilter", err)
				}
				return
			}
			if err != nil || !f.IsEmpty() || !f.Match(nil) || !f.Match(map[string]any{"a": 1.0}) {
				t.Fatalf("ParseFilter(%q) = %v, %v; want a filter admitting everything", tt.text, f, err)
			}
		})
	}
}

// TestNewFilterNumbers checks that a json.Number in a filter built from Go
// values is a JSON number literal within float64's range, as it is when
// ParseFilter decodes text: NaN or 0x10 must not slip in.
func TestNewFilterNumbers(t *testing.T) {
	tests := []struct {
		num string
		ok  bool
	}{
		{"2.5", true},
		{"-0", true},
		{"1e-400", true}, // rounds to 0, as the decoder does
		{"NaN", false},
		{"Inf", false},
		{"-Infinity", false},
		{"0x1p-2", false},
		{"1_0", false},
		{"+1", false},
		{"", false},
		{"1e400", false},
	}
	for _, tt := range tests {
		t.Run(tt.num, func(t *testing.T) {
			f, err := NewFilter(map[string]any{"a": map[string]any{"$gte": json.Number(tt.num)}})
			if tt.ok && (err != nil || f.IsEmpty()) {
				t.Fatalf("rejected: %v", err)
			}
			if !tt.ok && (!errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), "filter.a.$gte: ")) {
				t.Fatalf("err = %v, want ErrBadFilter naming filter.a.$gte", err)
			}
		})
	}
}

func TestAndFilters(t *testing.T) {
	a, _ := NewFilter(map[string]any{"user": "alice"})
	b, _ := ParseFilter(`{"year": {"$gte": 2020}}`)
	f := AndFilters(a, nil, &Filter{}, b)
	for _, c := range []struct {
		meta map[string]any
		want bool
	}{
		{map[string]any{"user": "alice", "year": 2021}, true},
		{map[string]any{"user": "alice", "year": 2019}, false},
		{map[string]any{"user": "bob", "year": 2021}, false},
	} {
		if got := f.Match(c.meta); got != c.want {
			t.Errorf("Match(%v) = %v", c.meta, got)
		}
	}
	if tree, ok := f.Tree(); !ok || tree.Op != FilterAnd || len(tree.Children) != 2 {
		t.Fatalf("Tree = %+v, %v", tree, ok)
	}
	if !AndFilters().IsEmpty() || !AndFilters(nil).IsEmpty() {
		t.Fatal("no filter should admit everything")
	}
	if g := AndFilters(a); !g.Match(map[string]any{"user": "alice"}) || g.Match(nil) {
		t.Fatal("one filter should be itself")
	}
}
