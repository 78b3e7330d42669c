package mnemo

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// leafFilter is the filter of one condition node (not $and or $or).
func leafFilter(t *testing.T, n FilterNode) *Filter {
	t.Helper()
	arg := n.Value
	if n.Op == FilterIn || n.Op == FilterNin {
		arg = n.Values
	}
	f, err := NewFilter(map[string]any{n.Field: map[string]any{string(n.Op): arg}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFilterReduce: what Reduce leaves, for conditions said to hold.
func TestFilterReduce(t *testing.T) {
	absent := func(field string) func(FilterNode) bool {
		return func(n FilterNode) bool {
			return n.Field == field && (n.Op == FilterExists && n.Value == false || n.Op == FilterNe || n.Op == FilterNin)
		}
	}
	never := func(FilterNode) bool { return false }
	tests := []struct {
		name   string
		filter string
		holds  func(FilterNode) bool
		want   string // "" for nil: the reduced filter admits everything
		same   bool   // Reduce returns the filter itself
	}{
		{"the expiry filter, nothing expires", `{"$or": [{"exp": {"$exists": false}}, {"exp": {"$gt": 5}}]}`, absent("exp"), "", false},
		{"the expiry filter, something may", `{"$or": [{"exp": {"$exists": false}}, {"exp": {"$gt": 5}}]}`, never, "", true},
		{"a scope and the expiry filter", `{"$and": [{"scope": "u1"}, {"$or": [{"exp": {"$exists": false}}, {"exp": {"$gt": 5}}]}]}`, absent("exp"), `{"scope": "u1"}`, false},
		{"implicit and, one part holds", `{"a": 1, "b": {"$ne": 2}, "c": 3}`, absent("b"), `{"a": 1, "c": 3}`, false},
		{"every part holds", `{"b": {"$ne": 2}, "x": {"$exists": false}}`, func(n FilterNode) bool { return absent("b")(n) || absent("x")(n) }, "", false},
		{"nested: an or inside an and inside an or", `{"$or": [{"a": 1}, {"$and": [{"b": {"$nin": [1]}}, {"c": 2}]}]}`, absent("b"), `{"$or": [{"a": 1}, {"c": 2}]}`, false},
		{"an or with no part that holds", `{"$or": [{"a": 1}, {"c": 2}]}`, absent("b"), "", true},
		{"a single condition", `{"a": {"$exists": false}}`, absent("a"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := f.Tree()
			got := f.Reduce(tt.holds)
			if after, _ := f.Tree(); !reflect.DeepEqual(before, after) {
				t.Fatal("Reduce changed the filter it was called on")
			}
			if tt.same {
				if got != f {
					t.Fatalf("Reduce returned a new filter %+v, want the filter itself", got)
				}
				return
			}
			if tt.want == "" {
				if got != nil {
					t.Fatalf("Reduce left %+v, want nil (admits everything)", got)
				}
				return
			}
			want, err := ParseFilter(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			gt, _ := got.Tree()
			wt, _ := want.Tree()
			if !reflect.DeepEqual(gt, wt) {
				t.Fatalf("Reduce left\n %+v\nwant\n %+v", gt, wt)
			}
		})
	}
	var empty *Filter
	if empty.Reduce(never) != nil || (&Filter{}).Reduce(never) != nil {
		t.Fatal("Reduce of an empty filter: not nil")
	}
}

// TestFilterReduceKeepsMeaning: over random records and filters, with
// holds answering from the records themselves (a condition holds when
// every record passes it), the reduced filter admits exactly what the
// filter admits.
func TestFilterReduceKeepsMeaning(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fields := []string{"a", "b", "c", "d"}
	value := func() any {
		switch r.IntN(4) {
		case 0:
			return float64(r.IntN(3))
		case 1:
			return fmt.Sprint("s", r.IntN(3))
		case 2:
			return r.IntN(2) == 0
		}
		return nil
	}
	leaf := func() map[string]any {
		f := fields[r.IntN(len(fields))]
		switch r.IntN(5) {
		case 0:
			return map[string]any{f: map[string]any{"$exists": r.IntN(2) == 0}}
		case 1:
			return map[string]any{f: map[string]any{"$ne": value()}}
		case 2:
			return map[string]any{f: map[string]any{"$nin": []any{value(), value()}}}
		case 3:
			return map[string]any{f: map[string]any{"$gte": float64(r.IntN(3))}}
		}
		return map[string]any{f: value()}
	}
	var tree func(depth int) map[string]any
	tree = func(depth int) map[string]any {
		if depth == 0 || r.IntN(3) == 0 {
			return leaf()
		}
		kids := make([]any, 1+r.IntN(3))
		for i := range kids {
			kids[i] = tree(depth - 1)
		}
		return map[string]any{[]string{"$and", "$or"}[r.IntN(2)]: kids}
	}
	reduced := 0
	for round := range 2000 {
		recs := make([]map[string]any, 1+r.IntN(6))
		for i := range recs {
			recs[i] = map[string]any{}
			for _, f := range fields {
				// Some fields absent from every record, some from none.
				if f == "d" || (f != "a" && r.IntN(2) == 0) {
					continue
				}
				recs[i][f] = value()
			}
		}
		f, err := NewFilter(tree(3))
		if err != nil {
			t.Fatal(err)
		}
		holds := func(n FilterNode) bool {
			leaf := leafFilter(t, n)
			for _, m := range recs {
				if !leaf.Match(m) {
					return false
				}
			}
			return true
		}
		g := f.Reduce(holds)
		if g != f {
			reduced++
		}
		for i, m := range recs {
			if f.Match(m) != g.Match(m) {
				ft, _ := f.Tree()
				gt, _ := g.Tree()
				t.Fatalf("round %d, record %d %v: filter %v says %v, reduced %v says %v", round, i, m, ft, f.Match(m), gt, g.Match(m))
			}
		}
	}
	if reduced < 200 {
		t.Fatalf("only %d of 2000 filters were reduced: the test does not exercise Reduce", reduced)
	}
}
