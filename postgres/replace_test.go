package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// TestReplaceWithWaitingWriters: writers on fresh connections queue
// behind ReplaceCollection's lock while final runs; the replace commits
// (no deadlock with the writers' locks) and every waiting write fails
// with ErrCollectionNotFound instead of landing in the dropped table.
func TestReplaceWithWaitingWriters(t *testing.T) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, freshDSN(t)+"&pool_max_conns=20", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := mnemo.CollectionConfig{Dimension: 3}
	old, err := s.CreateCollection(ctx, "facts", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCollection(ctx, "facts.next", cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	err = s.ReplaceCollection(ctx, "facts", "facts.next", func(ctx context.Context, o, n mnemo.Collection) error {
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = old.Upsert(ctx, mnemo.Record{ID: fmt.Sprint("w", i), Vector: []float32{1, 2, 3}})
			}()
		}
		time.Sleep(time.Second) // the writers are waiting for the lock by now
		return nil
	})
	wg.Wait()
	if err != nil {
		t.Fatalf("ReplaceCollection with writers waiting: %v", err)
	}
	for i, err := range errs {
		if !errors.Is(err, mnemo.ErrCollectionNotFound) {
			t.Errorf("waiting write %d: %v, want ErrCollectionNotFound", i, err)
		}
	}
}
