package fuzz

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// FuzzMetadata builds record metadata from the input (deep, wide and
// cyclic maps and lists, strings that may not be UTF-8, numbers of every
// kind, json.Number and json.RawMessage text, long strings) and upserts it
// over an existing record. Either Upsert refuses it with an error wrapping
// ErrInvalidRecord and the collection is unchanged, or Get returns it as
// encoding/json normalises it, and so does Get after the database is
// closed and opened again (which must succeed). Upsert must accept exactly
// what a reference built on encoding/json says fits the documented
// limits.
func FuzzMetadata(f *testing.F) {
	f.Add([]byte{2, 'a', 4, 3, 'x', 'y', 'z', 'b', 6, 7, 0})
	f.Add([]byte{3, 'a', 0, 2, 'b', 5, 1, 2, 3, 4, 5, 6, 7, 8, 'c', 11, 9, 9, 9, 9, 9, 9, 9, 9, 1, 'd', 15, 0, 3, 'k'})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := builder{data: data, keys: metaKeys}
		meta := b.object(int(b.byte() % 8))
		want, valid := refMetadata(meta)

		fs := vfs.NewMem()
		db, err := engine.Open("db", &engine.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { db.Close() }()
		c, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
		if err != nil {
			t.Fatal(err)
		}
		old := map[string]any{"old": true}
		if _, err := c.Upsert(ctx, mnemo.Record{ID: "keep", Vector: []float32{1, 1}}, mnemo.Record{ID: "r", Vector: []float32{0, 1}, Metadata: old}); err != nil {
			t.Fatal(err)
		}
		_, err = c.Upsert(ctx, mnemo.Record{ID: "r", Vector: []float32{1, 0}, Metadata: meta})
		switch {
		case err != nil && !errors.Is(err, mnemo.ErrInvalidRecord):
			t.Fatalf("Upsert: %v does not wrap ErrInvalidRecord", err)
		case err != nil && valid:
			t.Fatalf("Upsert refused metadata the reference accepts: %v", err)
		case err == nil && !valid:
			t.Fatalf("Upsert accepted metadata the reference refuses")
		case err != nil:
			checkMetadata(t, c, old) // unchanged
			return
		}
		checkMetadata(t, c, want)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if db, err = engine.Open("db", &engine.Options{FS: fs}); err != nil {
			t.Fatalf("Open after an accepted upsert: %v", err)
		}
		if c, err = db.Collection("c"); err != nil {
			t.Fatal(err)
		}
		checkMetadata(t, c, want)
	})
}

// checkMetadata fails unless c holds "keep" and "r", r with metadata want.
func checkMetadata(t *testing.T, c *engine.Collection, want map[string]any) {
	t.Helper()
	if n := c.Count(); n != 2 {
		t.Fatalf("Count = %d, want 2", n)
	}
	r, ok, err := c.Get(ctx, "r")
	if err != nil || !ok || !reflect.DeepEqual(r.Metadata, want) {
		t.Fatalf("Get = %.300v, %v, %v; want %.300v", r.Metadata, ok, err, want)
	}
}

// metaKeys are keys the metadata is built from: unicode, JSON and path
// syntax.
var metaKeys = []string{"a", "b", "é", "日本語", "🙂", "a.b", "[0]", `"`, `\`, "<&>", "\u2028", "\x00", " ", "$and", ""}

// refMetadata says what Upsert must do with meta, from encoding/json and
// the documented limits alone: accept it and read back want, or refuse it.
func refMetadata(meta map[string]any) (want map[string]any, ok bool) {
	if len(meta) == 0 {
		return nil, true
	}
	// Cycles nest without end, so the depth check comes first.
	if depthOver(meta, 1, mnemo.MaxMetadataDepth) || !validUTF8(meta) {
		return nil, false
	}
	b, err := json.Marshal(meta)
	if err != nil || len(b) > mnemo.MaxMetadataBytes {
		return nil, false
	}
	// Values of other Go types show their nesting and numbers once encoded.
	if json.Unmarshal(b, &want) != nil || depthOver(want, 1, mnemo.MaxMetadataDepth) {
		return nil, false
	}
	return want, true
}
