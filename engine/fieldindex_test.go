package engine

import (
	"testing"

	"github.com/mnemodb/mnemo"
)

func TestFieldIndexCandidates(t *testing.T) {
	p := newFieldIndex()
	p.add(1, "r1", map[string]any{"c": "a", "n": 1.0})
	p.add(2, "r2", map[string]any{"c": "b", "n": 2.0})
	p.add(3, "r3", map[string]any{"c": "a", "n": 2.0})
	p.remove(3, "r3", map[string]any{"c": "a", "n": 2.0})
	p.add(3, "r3", map[string]any{"c": "c", "n": 2.0})
	tests := []struct {
		filter string
		want   int
		ok     bool
	}{
		{`{"c": "a"}`, 1, true},
		{`{"c": {"$in": ["a", "b"]}}`, 2, true},
		{`{"c": "a", "n": 2}`, 1, true}, // the smaller part bounds the and (a superset)
		{`{"$or": [{"c": "a"}, {"c": "c"}]}`, 2, true},
		{`{"$or": [{"c": "a"}, {"n": {"$gt": 1}}]}`, 0, false},
		{`{"n": {"$gt": 1}}`, 0, false},
		{`{"c": {"$nin": ["a"]}}`, 0, false},
	}
	for _, tt := range tests {
		f, err := mnemo.ParseFilter(tt.filter)
		if err != nil {
			t.Fatal(err)
		}
		tree, _ := f.Tree()
		keys, ok := p.candidates(tree, 100)
		if ok != tt.ok || (ok && len(keys) != tt.want) {
			t.Errorf("%s: %v, %v; want %d keys, %v", tt.filter, keys, ok, tt.want, tt.ok)
		}
	}
	f, _ := mnemo.ParseFilter(`{"c": {"$in": ["a", "b"]}}`)
	tree, _ := f.Tree()
	if _, ok := p.candidates(tree, 1); ok {
		t.Error("candidates above the limit were returned")
	}
}
