package docstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// within runs fn and fails t if it has not returned after a few seconds,
// so that a call that blocks fails the test instead of hanging it.
func within(t *testing.T, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("%s did not return within 5s", what)
	}
}

// allocated returns the bytes the heap handed out while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// wantDocs checks what the listings report for a directory holding
// /a.md ("alpha") and the given entries that are not documents, and that
// none of them reads those entries whole.
func wantDocs(t *testing.T, d *Store, unreadable []string) {
	t.Helper()
	tests := []struct {
		name string
		call func() (any, error)
		want any
	}{
		{"ListAll", func() (any, error) { return d.ListAll(ctx) }, []string{"/a.md"}},
		{"ListPaths", func() (any, error) { return d.ListPaths(ctx, "") }, []string{"/a.md"}},
		{"SearchFullText", func() (any, error) { return d.SearchFullText(ctx, "a", 10) }, []Document{{"/a.md", "alpha"}}},
		{"Search", func() (any, error) { return d.Search(ctx, "a", 10) }, []string{"alpha"}},
		{"UnreadablePaths", func() (any, error) { return d.UnreadablePaths(ctx) }, unreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			within(t, tt.name, func() error {
				var got any
				var err error
				if mem := allocated(func() { got, err = tt.call() }); mem > 1<<20 {
					return fmt.Errorf("allocated %d bytes", mem)
				}
				if err == nil && !reflect.DeepEqual(got, tt.want) {
					err = fmt.Errorf("got %v, want %v", got, tt.want)
				}
				return err
			})
		})
	}
}

func TestSparseFileOverTheLimit(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, &Options{MaxSize: 1000, MaxReadSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Write(ctx, "/a.md", "alpha"); err != nil {
		t.Fatal(err)
	}
	const size = 4 << 30
	big := filepath.Join(dir, "big.md")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, size); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	t.Run("Read", func(t *testing.T) {
		within(t, "Read", func() error {
			var err error
			if mem := allocated(func() { _, err = d.Read(ctx, "/big.md") }); mem > 1<<20 {
				return fmt.Errorf("allocated %d bytes", mem)
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "2000") {
				return fmt.Errorf("got %v, want ErrTooLarge naming the 2000-byte read limit", err)
			}
			return nil
		})
	})
	t.Run("Edit", func(t *testing.T) {
		within(t, "Edit", func() error {
			if err := d.Edit(ctx, "/big.md", "x", "y"); !errors.Is(err, ErrTooLarge) {
				return fmt.Errorf("got %v, want ErrTooLarge", err)
			}
			return nil
		})
	})
	wantDocs(t, d, []string{"/big.md"})
}

// TestFileOverTheReadLimit: a file copied in by hand over MaxReadSize is
// not a document.
func TestFileOverTheReadLimit(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, &Options{MaxSize: 1000, MaxReadSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Write(ctx, "/a.md", "alpha"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.md"), []byte(strings.Repeat("x", 2001)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(ctx, "/big.md"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read of a 2001-byte file with MaxReadSize 2000 = %v, want ErrTooLarge", err)
	}
	wantDocs(t, d, []string{"/big.md"})
}

// TestEditShrinksALargeFile: a file copied in by hand over MaxSize (but
// within MaxReadSize) is a document: it reads, lists and searches, and an
// edit may shrink it, or keep its size, but not grow it. Before, it could
// not even be read, so no edit could bring it under the limit.
func TestEditShrinksALargeFile(t *testing.T) {
	dir := t.TempDir()
	d := openDocs(t, dir) // MaxSize 1000
	big := "intro " + strings.Repeat("x", 1000) + " outro"
	if err := os.WriteFile(filepath.Join(dir, "big.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := d.Read(ctx, "/big.md"); err != nil || c != big {
		t.Fatalf("Read = %d bytes, %v", len(c), err)
	}
	if got, _ := d.SearchFullText(ctx, "OUTRO", 0); len(got) != 1 || got[0].Path != "/big.md" {
		t.Fatalf("SearchFullText = %v", got)
	}
	if err := d.Edit(ctx, "/big.md", "intro", "introduction"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("an edit growing it = %v, want ErrTooLarge", err)
	}
	if err := d.Edit(ctx, "/big.md", "intro", "start"); err != nil {
		t.Fatalf("an edit shrinking it: %v", err)
	}
	if err := d.Edit(ctx, "/big.md", "outro", "final"); err != nil {
		t.Fatalf("an edit keeping its size: %v", err)
	}
	if c, _ := d.Read(ctx, "/big.md"); c != "start "+strings.Repeat("x", 1000)+" final" {
		t.Fatalf("after the edits: %q", c)
	}
	if err := d.Write(ctx, "/big.md", big); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Write over MaxSize = %v, want ErrTooLarge", err)
	}
	if _, err := Open(dir, &Options{MaxSize: 1000, MaxReadSize: 999}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("MaxReadSize below MaxSize: %v", err)
	}
}

func TestDirectoryWhereAFileIsExpected(t *testing.T) {
	dir := t.TempDir()
	d := openDocs(t, dir)
	if err := d.Write(ctx, "/notes/a.md", "alpha"); err != nil {
		t.Fatal(err)
	}
	for _, op := range []struct {
		name string
		err  error
	}{
		{"Read", func() error { _, err := d.Read(ctx, "/notes"); return err }()},
		{"Edit", d.Edit(ctx, "/notes", "a", "b")},
	} {
		t.Run(op.name, func(t *testing.T) {
			if !errors.Is(op.err, ErrPathConflict) {
				t.Errorf("%s of a directory = %v, want ErrPathConflict", op.name, op.err)
			}
		})
	}
}

// TestListingWhileDeleting lists a directory while documents are deleted
// and written again: a document removed between the listing of its
// directory and its read is gone, not unreadable.
func TestListingWhileDeleting(t *testing.T) {
	d := openDocs(t, t.TempDir())
	const n = 100
	for i := range n {
		if err := d.Write(ctx, fmt.Sprintf("/d%03d.md", i), "text"); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	churned := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				churned <- nil
				return
			default:
			}
			p := fmt.Sprintf("/d%03d.md", i%n)
			if err := d.Delete(ctx, p); err != nil {
				churned <- err
				return
			}
			if err := d.Write(ctx, p, "text"); err != nil {
				churned <- err
				return
			}
		}
	}()
	for range 200 {
		bad, err := d.UnreadablePaths(ctx)
		if err != nil || len(bad) > 0 {
			close(stop)
			<-churned
			t.Fatalf("UnreadablePaths = %v, %v; want none", bad, err)
		}
	}
	close(stop)
	if err := <-churned; err != nil {
		t.Fatal(err)
	}
}

// TestEditKeepsValidUTF8: an edit whose result would not be valid UTF-8
// (an invalid new text, or an old one that matches part of a character)
// is refused and changes nothing, in memory and in a directory, so that
// every document stays readable.
func TestEditKeepsValidUTF8(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		d, err := Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := d.Write(ctx, "/a.md", "café au lait"); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ old, new string }{
			{"lait", "\xff"},   // invalid new text
			{"\xa9", ""},       // the second byte of "é"
			{"caf\xc3", "tea"}, // a match that ends inside "é"
		} {
			if err := d.Edit(ctx, "/a.md", tt.old, tt.new); !errors.Is(err, ErrInvalid) {
				t.Errorf("dir %q: Edit(%q, %q) = %v, want ErrInvalid", dir, tt.old, tt.new, err)
			}
		}
		if got, err := d.Read(ctx, "/a.md"); err != nil || got != "café au lait" {
			t.Errorf("dir %q: after refused edits Read = %q, %v", dir, got, err)
		}
		d.Close()
	}
}
