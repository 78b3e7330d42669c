//go:build unix

package docstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// release opens the named pipe for writing without blocking and closes it,
// which wakes a reader stuck opening it (after a regression), so the test
// ends instead of leaving the reader behind.
func release(fifo string) {
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

func TestNamedPipe(t *testing.T) {
	dir := t.TempDir()
	d := openDocs(t, dir)
	if err := d.Write(ctx, "/a.md", "alpha"); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	t.Cleanup(func() {
		for range 10 {
			release(fifo)
		}
	})

	t.Run("Read", func(t *testing.T) {
		within(t, "Read", func() error {
			if _, err := d.Read(ctx, "/pipe.md"); !errors.Is(err, ErrNotRegular) {
				return fmt.Errorf("got %v, want ErrNotRegular", err)
			}
			return nil
		})
	})
	t.Run("Edit", func(t *testing.T) {
		within(t, "Edit", func() error {
			if err := d.Edit(ctx, "/pipe.md", "a", "b"); !errors.Is(err, ErrNotRegular) {
				return fmt.Errorf("got %v, want ErrNotRegular", err)
			}
			return nil
		})
	})
	wantDocs(t, d, []string{"/pipe.md"})

	// Writes of other documents go on while the store reads the directory.
	t.Run("concurrent Write", func(t *testing.T) {
		within(t, "Read, listing and Write together", func() error {
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); d.Read(ctx, "/pipe.md") }()
			go func() { defer wg.Done(); d.ListAll(ctx) }()
			err := d.Write(ctx, "/b.md", "beta")
			wg.Wait()
			return err
		})
	})
}
