package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

var _ mnemo.Sequencer = (*postgres.Collection)(nil)

// TestSequenceReadOnly: a read-only server refuses to reserve or advance
// with ErrReadOnly, and the sequence is as the primary left it.
func TestSequenceReadOnly(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	_, pc := openCollection(t, dsn, "notes", mnemo.CollectionConfig{Dimension: 2})
	seq := pc.(mnemo.Sequencer)
	if err := seq.Advance(ctx, 7); err != nil {
		t.Fatal(err)
	}
	replica, err := postgres.Open(ctx, readOnlyDSN(t, dsn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	rc, err := replica.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.(mnemo.Sequencer).Reserve(ctx, 1); !errors.Is(err, postgres.ErrReadOnly) {
		t.Fatalf("Reserve on a read-only server: %v, want ErrReadOnly", err)
	}
	if err := rc.(mnemo.Sequencer).Advance(ctx, 100); !errors.Is(err, postgres.ErrReadOnly) {
		t.Fatalf("Advance on a read-only server: %v, want ErrReadOnly", err)
	}
	if got, err := seq.Reserve(ctx, 1); err != nil || got != 7 {
		t.Fatalf("Reserve on the primary after the refused ones: %d, %v; want 7", got, err)
	}
}

// TestSequenceMigration: Open migrates a schema of version 1 (before
// sequences) to SchemaVersion; its collections keep their records and
// start with an unset sequence. Then the table is dropped behind its
// back.
func TestSequenceMigration(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCollection(ctx, "old", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 0}, Metadata: map[string]any{"pos": 41}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn := connect(t, dsn)
	// Back to version 1: no positions, no full-text tables.
	for _, stmt := range []string{`DROP TABLE mnemo_positions`, `DROP TABLE mnemo_postings_1, mnemo_terms_1, mnemo_textstats_1`,
		`UPDATE mnemo_schema SET version = 1`} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}

	s, err = postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatalf("Open of a version 1 schema: %v", err)
	}
	defer s.Close()
	if got, want := schemaRows(t, conn), fmt.Sprint([]int{postgres.SchemaVersion}); got != want {
		t.Fatalf("mnemo_schema holds %s after Open, want %s", got, want)
	}
	c, err = s.Collection(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.Count(ctx); err != nil || n != 1 {
		t.Fatalf("Count after the migration: %d, %v; want 1", n, err)
	}
	seq := c.(mnemo.Sequencer)
	if _, err := seq.Reserve(ctx, 1); !errors.Is(err, mnemo.ErrSequenceUnset) {
		t.Fatalf("Reserve of a collection from before the migration: %v, want ErrSequenceUnset", err)
	}
	if err := seq.Advance(ctx, 42); err != nil {
		t.Fatal(err)
	}
	if got, err := seq.Reserve(ctx, 1); err != nil || got != 42 {
		t.Fatalf("Reserve after Advance: %d, %v; want 42", got, err)
	}

	// Without its table (a damaged schema) a sequence is ErrSchema, not
	// a dropped collection.
	if _, err := conn.Exec(ctx, `DROP TABLE mnemo_positions`); err != nil {
		t.Fatal(err)
	}
	if _, err := seq.Reserve(ctx, 1); !errors.Is(err, postgres.ErrSchema) || errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Reserve without mnemo_positions: %v, want ErrSchema", err)
	}
	if err := seq.Advance(ctx, 50); !errors.Is(err, postgres.ErrSchema) || errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("Advance without mnemo_positions: %v, want ErrSchema", err)
	}
}
