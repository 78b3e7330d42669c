package ctxsync

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLockHonoursDeadline(t *testing.T) {
	var m Mutex
	if err := m.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := m.Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held mutex past the deadline: %v, want DeadlineExceeded", err)
	}
	m.Unlock()
	if err := m.Lock(context.Background()); err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	m.Unlock()
}

func TestLockWithDoneContextFails(t *testing.T) {
	var m Mutex
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Lock(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a canceled context: %v, want Canceled", err)
	}
	if err := m.Lock(context.Background()); err != nil { // not left locked
		t.Fatal(err)
	}
	m.Unlock()
}

func TestMutualExclusion(t *testing.T) {
	var m Mutex
	var wg sync.WaitGroup
	n := 0
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if err := m.Lock(context.Background()); err != nil {
					t.Error(err)
					return
				}
				n++
				m.Unlock()
			}
		})
	}
	wg.Wait()
	if n != 8000 {
		t.Fatalf("n = %d, want 8000", n)
	}
}

func TestUnlockOfUnlockedPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Unlock of an unlocked mutex did not panic")
		}
	}()
	var m Mutex
	m.Unlock()
}
