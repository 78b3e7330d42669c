package mnemo

import (
	"reflect"
	"testing"
)

func TestFilterTree(t *testing.T) {
	f, err := ParseFilter(`{"b": {"$in": ["x", 2]}, "a": 1, "$or": [{"c": {"$exists": false}}, {"d": {"$lte": "m"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := f.Tree()
	if !ok {
		t.Fatal("Tree of a non-empty filter said empty")
	}
	want := FilterNode{Op: FilterAnd, Children: []FilterNode{
		{Op: FilterOr, Children: []FilterNode{
			{Op: FilterExists, Field: "c", Value: false},
			{Op: FilterLte, Field: "d", Value: "m"},
		}},
		{Op: FilterEq, Field: "a", Value: 1.0},
		{Op: FilterIn, Field: "b", Values: []any{"x", 2.0}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Tree:\n got %+v\nwant %+v", got, want)
	}
	got.Children[2].Values[0] = "changed"
	if again, _ := f.Tree(); !reflect.DeepEqual(again, want) {
		t.Fatal("changing a returned tree changed the filter")
	}
	for _, text := range []string{"", "{}"} {
		empty, err := ParseFilter(text)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := empty.Tree(); ok {
			t.Fatalf("Tree of %q: not empty", text)
		}
	}
	var nilFilter *Filter
	if _, ok := nilFilter.Tree(); ok {
		t.Fatal("Tree of a nil filter: not empty")
	}
}

func TestCheckQueryMatchesQuery(t *testing.T) {
	cfg := CollectionConfig{Dimension: 2, Text: TextConfig{Disabled: true}}
	for _, q := range []Query{
		{Vector: []float32{1}},
		{Vector: []float32{0, 0}},
		{Text: "a"},
		{Vector: []float32{1, 0}, K: -1},
		{Vector: []float32{1, 0}, Mode: "nope"},
	} {
		_, _, err := CheckQuery("c", cfg, q)
		if err == nil {
			t.Errorf("CheckQuery(%+v) = nil, want an error", q)
		}
	}
	q, mode, err := CheckQuery("c", cfg, Query{Vector: []float32{1, 0}})
	if err != nil || mode != ModeVector || q.K != 10 {
		t.Fatalf("CheckQuery = %+v, %q, %v; want K 10, vector mode", q, mode, err)
	}
}
