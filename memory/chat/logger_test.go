package chat

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestLoggerLegacyCollection checks that a memory that keeps using the
// collection of the earlier default name says so to its Logger.
func TestLoggerLegacyCollection(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	old, err := NewVector(ctx, db, &VectorOptions{Collection: LegacyCollection})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	var logs bytes.Buffer
	v, err := NewVector(ctx, db, &VectorOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.Name() != LegacyCollection || !strings.Contains(logs.String(), "level=INFO") || !strings.Contains(logs.String(), "collection="+LegacyCollection) {
		t.Errorf("memory on %q logged %q", v.Name(), logs.String())
	}
}
