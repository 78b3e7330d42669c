package fuzz

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

// FuzzFilter parses an arbitrary filter and evaluates it on arbitrary
// metadata; whenever the parser accepts the filter, its verdict must equal a
// reference evaluator written straight from the language's definition.
// Text of JSON white space only is the documented empty filter, which
// admits everything; an accepted filter never nests deeper than
// MaxFilterDepth. The same input, read as opcodes, also builds a filter as
// Go values (cycles, deep chains, Go number types, json.Number) for
// NewFilter, held to the same properties.
func FuzzFilter(f *testing.F) {
	f.Add(`{"a": 1}`, `{"a": 1}`)
	f.Add(`{"a": {"$gt": 1}, "b": {"$in": ["x", "y"]}}`, `{"a": 2, "b": "y"}`)
	f.Add(`{"$or": [{"a": {"$exists": false}}, {"c": {"$ne": true}}]}`, `{"c": true}`)
	f.Add(`{"$and": [{"s": {"$lte": "m"}}, {"n": {"$nin": [1, 2]}}]}`, `{"s": "k", "n": 3}`)
	f.Add("", `{"a": 1}`)
	f.Add(" \t\r\n", "{}")
	f.Add("\u00a0", "{}")
	f.Fuzz(func(t *testing.T, filterJSON, metaJSON string) {
		var meta map[string]any
		metaOK := json.Unmarshal([]byte(metaJSON), &meta) == nil
		checkFilterText(t, filterJSON, meta, metaOK)
		checkFilterValue(t, []byte(filterJSON), meta, metaOK)
	})
}

// checkFilterText checks ParseFilter on text against the reference.
func checkFilterText(t *testing.T, text string, meta map[string]any, metaOK bool) {
	flt, err := mnemo.ParseFilter(text)
	if strings.Trim(text, " \t\r\n") == "" {
		if err != nil || !flt.IsEmpty() || !flt.Match(meta) {
			t.Fatalf("ParseFilter(%q) = %v, %v; empty text admits everything", text, flt, err)
		}
		return
	}
	if err != nil {
		if !errors.Is(err, mnemo.ErrBadFilter) {
			t.Fatalf("ParseFilter(%q): %v does not wrap ErrBadFilter", text, err)
		}
		return
	}
	var spec any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if dec.Decode(&spec) != nil {
		t.Fatalf("the parser accepted %q, which is not JSON", text)
	}
	if depthOver(spec, 1, mnemo.MaxFilterDepth) {
		t.Fatalf("the parser accepted %q, nested deeper than %d levels", text, mnemo.MaxFilterDepth)
	}
	obj, _ := spec.(map[string]any)
	if metaOK {
		if got, want := flt.Match(meta), refObject(obj, meta); got != want {
			t.Fatalf("filter %s on %v: Match %v, reference %v", text, meta, got, want)
		}
	}
}

// filterKeys are the keys the Go-value filters are built from.
var filterKeys = []string{"$and", "$or", "a", "b", "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$not", "", "c"}

// checkFilterValue builds a filter as Go values from data and checks
// NewFilter on it against the reference.
func checkFilterValue(t *testing.T, data []byte, meta map[string]any, metaOK bool) {
	b := builder{data: data, keys: filterKeys}
	spec := b.object(int(b.byte() % 4))
	flt, err := mnemo.NewFilter(spec)
	if err != nil {
		if !errors.Is(err, mnemo.ErrBadFilter) {
			t.Fatalf("NewFilter: %v does not wrap ErrBadFilter", err)
		}
		return
	}
	if depthOver(spec, 1, mnemo.MaxFilterDepth) { // also true of a cycle, which cannot be printed
		t.Fatalf("NewFilter accepted a filter nested deeper than %d levels", mnemo.MaxFilterDepth)
	}
	if metaOK {
		if got, want := flt.Match(meta), refObject(spec, meta); got != want {
			t.Fatalf("filter %#v on %v: Match %v, reference %v", spec, meta, got, want)
		}
	}
}

func refObject(obj, meta map[string]any) bool {
	for k, v := range obj {
		var ok bool
		switch k {
		case "$and", "$or":
			list := v.([]any)
			ok = k == "$and"
			for _, item := range list {
				r := refObject(item.(map[string]any), meta)
				if k == "$and" {
					ok = ok && r
				} else {
					ok = ok || r
				}
			}
		default:
			ok = refField(meta, k, v)
		}
		if !ok {
			return false
		}
	}
	return true
}

// scalar normalises a value: numbers of every Go type the builder makes to
// float64; ok is false for lists and objects.
func scalar(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64, string, bool, nil:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint8:
		return float64(x), true
	}
	return nil, false
}

func refField(meta map[string]any, field string, cond any) bool {
	raw, present := meta[field]
	val, isScalar := scalar(raw)
	ops, isOps := cond.(map[string]any)
	if !isOps {
		ops = map[string]any{"$eq": cond}
	}
	for op, arg := range ops {
		switch op {
		case "$eq", "$ne":
			a, _ := scalar(arg)
			eq := present && isScalar && val == a
			return eq == (op == "$eq")
		case "$in", "$nin":
			in := false
			for _, item := range arg.([]any) {
				a, _ := scalar(item)
				in = in || (present && isScalar && val == a)
			}
			return in == (op == "$in")
		case "$exists":
			return present == arg.(bool)
		default: // $gt $gte $lt $lte
			a, _ := scalar(arg)
			if !present || !isScalar {
				return false
			}
			var c int
			switch x := val.(type) {
			case float64:
				y, ok := a.(float64)
				if !ok {
					return false
				}
				c = cmp(x < y, x > y)
			case string:
				y, ok := a.(string)
				if !ok {
					return false
				}
				c = cmp(x < y, x > y)
			default:
				return false
			}
			switch op {
			case "$gt":
				return c > 0
			case "$gte":
				return c >= 0
			case "$lt":
				return c < 0
			}
			return c <= 0
		}
	}
	return false
}

func cmp(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}
