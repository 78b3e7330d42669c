package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"strings"
	"testing"
)

// TestVectorNormOverflow checks that a cosine vector whose finite
// components square to more than float32 holds is refused as such, not as
// a zero vector, by every entry point.
func TestVectorNormOverflow(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	big := vec(3e38, 3e38)
	tests := []struct {
		name string
		call func() error
	}{
		{"Upsert", func() error { _, err := c.Upsert(ctx, mnemo.Record{ID: "x", Vector: big}); return err }},
		{"Validate", func() error { return c.Validate(mnemo.Record{ID: "x", Vector: big}) }},
		{"Query", func() error { _, err := c.Query(ctx, mnemo.Query{Vector: big, K: 1}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, mnemo.ErrNormOverflow) || errors.Is(err, mnemo.ErrZeroVector) || !strings.Contains(err.Error(), "overflows") {
				t.Fatalf("err = %v, want ErrNormOverflow saying the norm overflows", err)
			}
		})
	}
	if c.Count() != 0 {
		t.Fatal("a rejected vector was stored")
	}
}

// TestErrorsNameTheRecordTheCallerKnows: a bad record without an ID is
// named by its place in the batch, not by an ID the engine made up.
func TestErrorsNameTheRecordTheCallerKnows(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	_, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 0}}, mnemo.Record{Vector: []float32{1, 0, 0}})
	if !errors.Is(err, mnemo.ErrDimension) || !strings.Contains(err.Error(), "record 1 of the batch") {
		t.Fatalf("got %v, want a dimension error naming record 1 of the batch", err)
	}
	_, err = c.Upsert(ctx, mnemo.Record{ID: "mine", Vector: []float32{0, 0}})
	if !errors.Is(err, mnemo.ErrZeroVector) || !strings.Contains(err.Error(), `record "mine"`) {
		t.Fatalf("got %v, want a zero-vector error naming record \"mine\"", err)
	}
	if c.Count() != 0 {
		t.Fatalf("a refused batch stored %d records", c.Count())
	}
}
