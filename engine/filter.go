package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Filter is a parsed metadata filter. The zero Filter (or a nil *Filter)
// admits every record.
//
// The language is Chroma's: a JSON object whose keys are field names or the
// combinators $and and $or. A field maps to a value (equality) or to an
// object with exactly one operator:
//
//	{"source": "web"}                            equality
//	{"year": {"$gte": 2020}}                     $gt $gte $lt $lte: numbers or strings
//	{"lang": {"$ne": "fr"}}                      $ne: not equal (true when the field is absent)
//	{"tag": {"$in": ["a", "b"]}}                 $in, $nin: a list of values
//	{"draft": {"$exists": false}}                $exists: presence of the field
//	{"$and": [{...}, {...}]}, {"$or": [...]}     combinators, any depth
//
// Several fields in one object are an implicit $and. Values are strings,
// numbers, booleans and null; equality between a number and a string is
// false, and integers and floats compare by value. A comparison with a value
// of another type (a number against a string) is false. Parse reports the
// first problem with its path ("filter.$and[1].year: ...").
type Filter struct {
	root node
}

type node interface {
	eval(meta map[string]any) bool
}

type (
	andNode []node
	orNode  []node
	cmpNode struct {
		field string
		op    string // $eq $ne $gt $gte $lt $lte
		val   any    // canonical: string, float64, bool or nil
	}
	inNode struct {
		field string
		vals  []any
		not   bool
	}
	existsNode struct {
		field string
		want  bool
	}
)

// ParseFilter parses a filter from its JSON text. An empty string or "{}"
// admits everything.
func ParseFilter(text string) (*Filter, error) {
	if strings.TrimSpace(text) == "" {
		return &Filter{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the filter object", ErrBadFilter)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: filter: want a JSON object, got %s", ErrBadFilter, typeName(v))
	}
	return NewFilter(m)
}

// NewFilter builds a filter from its decoded form (what encoding/json
// produces, or the same shape written in Go: map[string]any, []any, string,
// float64, int, json.Number, bool, nil).
func NewFilter(m map[string]any) (*Filter, error) {
	if len(m) == 0 {
		return &Filter{}, nil
	}
	root, err := parseObject("filter", m)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root}, nil
}

// Match reports whether a record with metadata meta passes the filter.
func (f *Filter) Match(meta map[string]any) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(meta)
}

// IsEmpty reports whether the filter admits everything.
func (f *Filter) IsEmpty() bool { return f == nil || f.root == nil }

func parseObject(path string, m map[string]any) (node, error) {
	if len(m) == 0 {
		return nil, fmt.Errorf("%w: %s: empty object", ErrBadFilter, path)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic errors and evaluation order
	var parts andNode
	for _, k := range keys {
		p := path + "." + k
		switch {
		case k == "$and" || k == "$or":
			list, ok := m[k].([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("%w: %s: want a non-empty list of objects", ErrBadFilter, p)
			}
			var kids []node
			for i, item := range list {
				obj, ok := item.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%w: %s[%d]: want an object, got %s", ErrBadFilter, p, i, typeName(item))
				}
				kid, err := parseObject(fmt.Sprintf("%s[%d]", p, i), obj)
				if err != nil {
					return nil, err
				}
				kids = append(kids, kid)
			}
			if k == "$and" {
				parts = append(parts, andNode(kids))
			} else {
				parts = append(parts, orNode(kids))
			}
		case strings.HasPrefix(k, "$"):
			return nil, fmt.Errorf("%w: %s: unknown combinator (want $and or $or)", ErrBadFilter, p)
		case k == "":
			return nil, fmt.Errorf("%w: %s: empty field name", ErrBadFilter, p)
		default:
			n, err := parseField(p, k, m[k])
			if err != nil {
				return nil, err
			}
			parts = append(parts, n)
		}
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return parts, nil
}

func parseField(path, field string, v any) (node, error) {
	ops, ok := v.(map[string]any)
	if !ok {
		val, err := scalar(path, v)
		if err != nil {
			return nil, err
		}
		return cmpNode{field, "$eq", val}, nil
	}
	if len(ops) != 1 {
		return nil, fmt.Errorf("%w: %s: want exactly one operator, got %d", ErrBadFilter, path, len(ops))
	}
	for op, arg := range ops {
		p := path + "." + op
		switch op {
		case "$eq", "$ne":
			val, err := scalar(p, arg)
			if err != nil {
				return nil, err
			}
			return cmpNode{field, op, val}, nil
		case "$gt", "$gte", "$lt", "$lte":
			val, err := scalar(p, arg)
			if err != nil {
				return nil, err
			}
			switch val.(type) {
			case float64, string:
			default:
				return nil, fmt.Errorf("%w: %s: want a number or a string, got %s", ErrBadFilter, p, typeName(arg))
			}
			return cmpNode{field, op, val}, nil
		case "$in", "$nin":
			list, ok := arg.([]any)
			if !ok {
				return nil, fmt.Errorf("%w: %s: want a list, got %s", ErrBadFilter, p, typeName(arg))
			}
			vals := make([]any, len(list))
			for i, item := range list {
				val, err := scalar(fmt.Sprintf("%s[%d]", p, i), item)
				if err != nil {
					return nil, err
				}
				vals[i] = val
			}
			return inNode{field, vals, op == "$nin"}, nil
		case "$exists":
			b, ok := arg.(bool)
			if !ok {
				return nil, fmt.Errorf("%w: %s: want true or false, got %s", ErrBadFilter, p, typeName(arg))
			}
			return existsNode{field, b}, nil
		default:
			return nil, fmt.Errorf("%w: %s: unknown operator (want $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin or $exists)", ErrBadFilter, p)
		}
	}
	panic("unreachable")
}

// scalar canonicalises a filter value: numbers to float64, strings, bools
// and nil as they are.
func scalar(path string, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadFilter, path, err)
		}
		return f, nil
	}
	if f, ok := toFloat(v); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: %s: %v is not a JSON number", ErrBadFilter, path, f)
		}
		return f, nil
	}
	return nil, fmt.Errorf("%w: %s: want a string, number, boolean or null, got %s", ErrBadFilter, path, typeName(v))
}

// toFloat converts Go numeric types to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// canon returns a stored metadata value in the canonical form filters
// compare against (numbers as float64); ok is false for values filters
// cannot match (lists, objects).
func canon(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, true
	}
	if f, ok := toFloat(v); ok {
		return f, true
	}
	return nil, false
}

func equal(a, b any) bool { return a == b } // canonical scalars compare with ==

func (n andNode) eval(m map[string]any) bool {
	for _, k := range n {
		if !k.eval(m) {
			return false
		}
	}
	return true
}

func (n orNode) eval(m map[string]any) bool {
	for _, k := range n {
		if k.eval(m) {
			return true
		}
	}
	return false
}

func (n cmpNode) eval(m map[string]any) bool {
	raw, present := m[n.field]
	v, ok := canon(raw)
	if n.op == "$ne" {
		return !present || !ok || !equal(v, n.val)
	}
	if !present || !ok {
		return false
	}
	if n.op == "$eq" {
		return equal(v, n.val)
	}
	c, comparable := compare(v, n.val)
	if !comparable {
		return false
	}
	switch n.op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	}
	return c <= 0 // $lte
}

// compare orders two canonical values of the same ordered type.
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}

func (n inNode) eval(m map[string]any) bool {
	raw, present := m[n.field]
	v, ok := canon(raw)
	in := present && ok && slices.ContainsFunc(n.vals, func(x any) bool { return equal(v, x) })
	return in != n.not
}

func (n existsNode) eval(m map[string]any) bool {
	_, present := m[n.field]
	return present == n.want
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
