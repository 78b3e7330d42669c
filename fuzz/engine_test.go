package fuzz

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

var ctx = context.Background()

// FuzzEngineOps decodes operations from the input and applies them to an
// engine collection on an in-memory filesystem and to a map; after every
// operation Count, Get and an exact query must agree with the map, and a
// reopen must lose nothing.
func FuzzEngineOps(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 9, 1, 1, 0, 3, 4, 4, 0, 2, 2, 5, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 0, 2, 4, 0, 0, 1, 0, 0, 3, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		db, err := engine.Open("db", &engine.Options{FS: fs, CheckpointEvery: 5})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { db.Close() }()
		cfg := mnemo.CollectionConfig{Dimension: 3, Metric: mnemo.L2, M: 4, EfConstruction: 16}
		c, err := db.CreateCollection(ctx, "c", cfg)
		if err != nil {
			t.Fatal(err)
		}
		model := map[string][]float32{}
		for len(data) >= 3 {
			op, id, arg := data[0]%6, fmt.Sprint("k", data[1]%12), data[2]
			data = data[3:]
			switch op {
			case 0, 1:
				v := []float32{float32(arg%7) - 3, float32(arg/7%5) - 2, float32(id[1]%3) + 0.5}
				if _, err := c.Upsert(ctx, mnemo.Record{ID: id, Vector: v, Content: id, Metadata: map[string]any{"a": float64(arg % 3)}}); err != nil {
					t.Fatal(err)
				}
				model[id] = v
			case 2:
				if n, err := c.Delete(ctx, id); err != nil || (n == 1) != (model[id] != nil) {
					t.Fatalf("Delete(%s) = %d, %v", id, n, err)
				}
				delete(model, id)
			case 3:
				if err := c.Checkpoint(ctx); err != nil {
					t.Fatal(err)
				}
			case 4:
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				if db, err = engine.Open("db", &engine.Options{FS: fs, CheckpointEvery: 5}); err != nil {
					t.Fatal(err)
				}
				if c, err = db.Collection("c"); err != nil {
					t.Fatal(err)
				}
			case 5:
				q := []float32{float32(arg%7) - 3, float32(arg%5) - 2, 1}
				checkQuery(t, c, model, q, 1+int(arg%5))
			}
			if c.Count() != len(model) {
				t.Fatalf("Count %d, model %d", c.Count(), len(model))
			}
			for id, v := range model {
				r, ok, err := c.Get(ctx, id)
				if !ok || err != nil || !slices.Equal(r.Vector, v) {
					t.Fatalf("Get(%s) = %v, %v, %v; model %v", id, r.Vector, ok, err, v)
				}
			}
		}
	})
}

func checkQuery(t *testing.T, c *engine.Collection, model map[string][]float32, q []float32, k int) {
	t.Helper()
	hits, err := c.Query(ctx, mnemo.Query{Vector: q, K: k, Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for _, v := range model {
		var d float64
		for i := range q {
			d += float64(q[i]-v[i]) * float64(q[i]-v[i])
		}
		want = append(want, d)
	}
	slices.Sort(want)
	if len(hits) != min(k, len(want)) {
		t.Fatalf("%d hits, want %d", len(hits), min(k, len(want)))
	}
	for i, h := range hits {
		if math.Abs(float64(h.Distance)-want[i]) > 1e-4 {
			t.Fatalf("hit %d at %v, want %v", i, h.Distance, want[i])
		}
	}
}
