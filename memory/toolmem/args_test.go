package toolmem

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/mnemodb/mnemo"
)

// TestArgsComeBackExact stores the ported agent's arguments, {"n": 5,
// "id": int64(9007199254740993)}, with other JSON values: they must come
// back with the documented types and exact values, before and after the
// database is reopened (n was a float64 and id 9007199254740992).
func TestArgsComeBackExact(t *testing.T) {
	dir := t.TempDir()
	m := mustOpen(t, dir, nil)
	args := map[string]any{
		"n": 5, "id": int64(9007199254740993), "max": uint64(math.MaxUint64), "f": 0.1, "neg": -1.5e-300,
		"s": "Paris", "ok": true, "none": nil, "list": []int{1, 2}, "obj": map[string]int32{"k": -7},
	}
	want := map[string]any{
		"n": json.Number("5"), "id": json.Number("9007199254740993"), "max": json.Number("18446744073709551615"),
		"f": json.Number("0.1"), "neg": json.Number("-1.5e-300"),
		"s": "Paris", "ok": true, "none": nil, "list": []any{json.Number("1"), json.Number("2")},
		"obj": map[string]any{"k": json.Number("-7")},
	}
	const q = "fetch the user record"
	if _, err := m.Store(ctx, Entry{Question: q, ToolName: "get_user", ToolArgs: args}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := m.Retrieve(ctx, q, nil)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: Retrieve = %+v, %v", when, got, err)
		}
		if !reflect.DeepEqual(got[0].ToolArgs, want) {
			t.Fatalf("%s: ToolArgs = %#v\nwant %#v", when, got[0].ToolArgs, want)
		}
		var typed struct {
			N   int
			ID  int64
			Max uint64
			F   float64
		}
		if err := got[0].DecodeArgs(&typed); err != nil || typed.N != 5 || typed.ID != 9007199254740993 ||
			typed.Max != math.MaxUint64 || typed.F != 0.1 {
			t.Fatalf("%s: DecodeArgs = %+v, %v", when, typed, err)
		}
		if n, err := got[0].ToolArgs["id"].(json.Number).Int64(); err != nil || n != 9007199254740993 {
			t.Fatalf("%s: id.Int64() = %d, %v", when, n, err)
		}
	}
	check("in memory")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = mustOpen(t, dir, nil)
	defer m.Close()
	check("after reopen")
}

// TestArgsStoredByEarlierVersions reads an entry whose arguments an
// earlier version stored as metadata (numbers as float64): they come back
// with the same types as new ones, numbers as json.Number.
func TestArgsStoredByEarlierVersions(t *testing.T) {
	dir := t.TempDir()
	m := mustOpen(t, dir, nil)
	const q = "convert 100 dollars to euros"
	v, err := m.space.Vector(ctx, "question", q)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]any{"tool_name": "fx", "tool_args": map[string]any{"amount": 100, "to": "EUR", "rates": []any{1.5, 2}},
		"result_summary": "92 EUR", "timestamp": "2026-01-02T03:04:05Z"}
	if _, err := m.tools.Get().Upsert(ctx, mnemo.Record{ID: "old", Vector: v, Content: q, Metadata: old}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m = mustOpen(t, dir, nil)
	defer m.Close()
	got, err := m.Retrieve(ctx, q, nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("Retrieve = %+v, %v", got, err)
	}
	want := map[string]any{"amount": json.Number("100"), "to": "EUR", "rates": []any{json.Number("1.5"), json.Number("2")}}
	if !reflect.DeepEqual(got[0].ToolArgs, want) {
		t.Fatalf("ToolArgs = %#v, want %#v", got[0].ToolArgs, want)
	}
}

func TestArgsDepth(t *testing.T) {
	m := mustOpen(t, "", nil)
	defer m.Close()
	if _, err := m.Store(ctx, Entry{Question: "deep", ToolArgs: nested(MaxArgsDepth)}); err != nil {
		t.Fatalf("%d levels: %v", MaxArgsDepth, err)
	}
	// Brackets inside strings do not count.
	if _, err := m.Store(ctx, Entry{Question: "brackets", ToolArgs: map[string]any{"s": `[[[[{{{{"\"`}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Store(ctx, Entry{Question: "too deep", ToolArgs: nested(MaxArgsDepth + 1)}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("%d levels: %v, want ErrInvalid", MaxArgsDepth+1, err)
	}
}
