package fuzz

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/engine"
)

// FuzzFilter parses an arbitrary filter and evaluates it on arbitrary
// metadata; whenever the parser accepts the filter, its verdict must equal a
// reference evaluator written straight from the language's definition.
func FuzzFilter(f *testing.F) {
	f.Add(`{"a": 1}`, `{"a": 1}`)
	f.Add(`{"a": {"$gt": 1}, "b": {"$in": ["x", "y"]}}`, `{"a": 2, "b": "y"}`)
	f.Add(`{"$or": [{"a": {"$exists": false}}, {"c": {"$ne": true}}]}`, `{"c": true}`)
	f.Add(`{"$and": [{"s": {"$lte": "m"}}, {"n": {"$nin": [1, 2]}}]}`, `{"s": "k", "n": 3}`)
	f.Fuzz(func(t *testing.T, filterJSON, metaJSON string) {
		flt, err := engine.ParseFilter(filterJSON)
		if err != nil {
			return
		}
		var meta map[string]any
		if json.Unmarshal([]byte(metaJSON), &meta) != nil {
			return
		}
		var spec any
		dec := json.NewDecoder(strings.NewReader(filterJSON))
		dec.UseNumber()
		if dec.Decode(&spec) != nil {
			t.Fatalf("the parser accepted %q, which is not JSON", filterJSON)
		}
		obj, _ := spec.(map[string]any)
		if got, want := flt.Match(meta), refObject(obj, meta); got != want {
			t.Fatalf("filter %s on %s: Match %v, reference %v", filterJSON, metaJSON, got, want)
		}
	})
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

// scalar normalises a value: numbers to float64; ok is false for lists and
// objects.
func scalar(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64, string, bool, nil:
		return x, true
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
