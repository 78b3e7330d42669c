package jsondepth

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// nest wraps v in levels objects {"a": ...}.
func nest(levels int, v any) any {
	for range levels {
		v = map[string]any{"a": v}
	}
	return v
}

// jsonDepth is the reference: the nesting of v's JSON encoding.
func jsonDepth(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	depth, most, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}

type inner struct {
	Y []int
}

type outer struct {
	inner         // flattened: Y is a field of outer
	X     []int   `json:"x"`
	Skip  [][]int `json:"-"`
	hid   [][]int
}

type named struct {
	inner `json:"in"` // a tag name keeps it a level of its own
}

type node struct {
	Next *node
	Tags []string
}

type self struct {
	*self
	X int
}

func TestDepthMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"scalar", 3.5},
		{"empty object", map[string]any{}},
		{"objects", nest(5, 1)},
		{"arrays", []any{[]any{[]any{1}}, 2}},
		{"typed map of slices", map[string][]map[string]int{"a": {{"b": 1}}}},
		{"bytes are a string", map[string][]byte{"a": []byte("xyz")}},
		{"arrays of bytes are arrays", map[string][2]byte{"a": {1, 2}}},
		{"nil map and slice are null", map[string]any{"m": map[string]any(nil), "s": []any(nil)}},
		{"time marshals itself", map[string]any{"t": time.Unix(0, 0)}},
		{"embedded struct flattened", outer{inner: inner{Y: []int{1}}, X: []int{2}, Skip: [][]int{{1}}, hid: [][]int{{1}}}},
		{"embedded struct with a tag name", named{inner{Y: []int{1}}}},
		{"pointers", &node{Next: &node{Tags: []string{"a"}}}},
		{"self-embedding type", self{self: &self{X: 1}, X: 2}},
		{"wide", map[string]any{"a": nest(3, 1), "b": []any{nest(7, 1)}, "c": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := jsonDepth(t, tt.v)
			if err := Check("v", tt.v, want); err != nil {
				t.Errorf("limit %d (the JSON's depth): %v", want, err)
			}
			if want > 0 {
				if err := Check("v", tt.v, want-1); err == nil {
					t.Errorf("limit %d: no error, but the JSON nests %d levels", want-1, want)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	cyclicMap := map[string]any{"k": 1}
	cyclicMap["self"] = []any{cyclicMap}
	cyclicSlice := []any{nil}
	cyclicSlice[0] = cyclicSlice
	cyclicPtr := &node{}
	cyclicPtr.Next = cyclicPtr
	long := nest(200, 1)
	tests := []struct {
		name  string
		v     any
		limit int
		want  string
	}{
		{"too deep", nest(4, 1), 3, "args.a.a.a: nested deeper than 3 levels"},
		{"too deep in an array", map[string]any{"list": []any{1, []any{2}}}, 2, "args.list[1]: nested deeper than 2 levels"},
		{"a map holding itself", cyclicMap, 64, "args.self[0]: contains itself (a cycle)"},
		{"a slice holding itself", cyclicSlice, 64, "args[0]: contains itself (a cycle)"},
		{"a pointer cycle", cyclicPtr, 64, "args.Next: contains itself (a cycle)"},
		{"a long path is shortened", long, 100, "args" + strings.Repeat(".a", 38) + " ... " + strings.Repeat(".a", 40) + ": nested deeper than 100 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("args", tt.v, tt.limit)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestSharedValues checks that a value sharing its parts many times (60
// levels of two references to the same map: 2^60 paths) is walked in
// time linear in its size, not in its paths.
func TestSharedValues(t *testing.T) {
	v := any(1)
	for range 60 {
		m := map[string]any{"a": v, "b": v}
		v = m
	}
	s := any(1)
	for range 60 {
		s = []any{s, s}
	}
	done := make(chan [4]error, 1)
	go func() {
		done <- [4]error{Check("v", v, 60), Check("v", v, 59), Check("s", s, 60), Check("s", s, 59)}
	}()
	select {
	case errs := <-done:
		if errs[0] != nil || errs[1] == nil || errs[2] != nil || errs[3] == nil {
			t.Fatalf("limits 60, 59 on maps and slices: %v", errs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("walking a value with shared parts did not finish within 5s")
	}
}
