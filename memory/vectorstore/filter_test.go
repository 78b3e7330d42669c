package vectorstore

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mnemodb/mnemo"
)

func TestFilterOf(t *testing.T) {
	f, _ := mnemo.ParseFilter(`{"year": {"$lt": 2025}}`)
	meta := map[string]any{"source": "chat", "year": float64(2024)}
	tests := []struct {
		name   string
		filter any
		match  bool // whether the filter admits meta
	}{
		{"nil", nil, true},
		{"mnemo filter", f, true},
		{"json text", `{"source": "web"}`, false},
		{"bytes", []byte(`{"source": "chat"}`), true},
		{"raw json", json.RawMessage(`{"year": {"$gte": 2025}}`), false},
		{"map", map[string]any{"source": "chat"}, true},
		{"map with an operator", map[string]any{"year": map[string]any{"$in": []any{2020, 2024}}}, true},
		{"and of typed maps, as langchaingo's Chroma store builds it", map[string]any{"$and": []map[string]any{{"source": "chat"}, {"year": 2024}}}, true},
		{"struct", struct {
			Source string `json:"source"`
		}{"web"}, false},
		{"empty", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FilterOf(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got.Match(meta) != tt.match {
				t.Fatalf("Match = %v, want %v", !tt.match, tt.match)
			}
		})
	}
	bad := []struct {
		name   string
		filter any
		want   error
	}{
		{"unknown operator", `{"year": {"$near": 1}}`, mnemo.ErrBadFilter},
		{"two operators", map[string]any{"year": map[string]any{"$gt": 1, "$lt": 3}}, mnemo.ErrBadFilter},
		{"malformed json", "{", mnemo.ErrBadFilter},
		{"not an object", 42, mnemo.ErrBadFilter},
		{"not json", func() {}, ErrInvalid},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := FilterOf(tt.filter); !errors.Is(err, ErrInvalid) || !errors.Is(err, tt.want) {
				t.Fatalf("%v, want ErrInvalid and %v", err, tt.want)
			}
		})
	}
}
