package fuzz

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/memory/docstore"
)

// FuzzDocumentPaths writes, reads and deletes a document at an arbitrary
// path: the operation is either refused with ErrBadPath or acts on a file
// inside the store's root; nothing outside the root is ever created,
// changed or removed, and no error names a host path.
func FuzzDocumentPaths(f *testing.F) {
	for _, p := range []string{"/a.md", "notes/b.md", "../x", "%2e%2e/x", "a/../../x", "a\\b", "/.git/config", "C:/x", "//s/x", "a/./b.md", "\x00"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		base := t.TempDir()
		root := filepath.Join(base, "root")
		outside := filepath.Join(base, "outside.md")
		os.WriteFile(outside, []byte("outside"), 0o644)
		d, err := docstore.Open(root, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		werr := d.Write(ctx, p, "content")
		_, rerr := d.Read(ctx, p)
		derr := d.Delete(ctx, p)
		// base is unique to this run, so p cannot name it by chance, while
		// an error may well quote a p such as "../tmp" that holds the
		// name of the system's temporary directory.
		for _, err := range []error{werr, rerr, derr} {
			if err != nil && strings.Contains(err.Error(), base) {
				t.Fatalf("error names a host path: %v", err)
			}
		}
		if werr != nil && !errors.Is(werr, docstore.ErrBadPath) && !errors.Is(werr, docstore.ErrTooLarge) {
			// Some valid names still fail on this filesystem (too long a
			// segment, say); they must not have escaped either.
			t.Logf("write %q: %v", p, werr)
		}
		entries, _ := os.ReadDir(base)
		for _, e := range entries {
			if e.Name() != "root" && e.Name() != "outside.md" {
				t.Fatalf("%q created %s outside the root", p, e.Name())
			}
		}
		if b, err := os.ReadFile(outside); err != nil || string(b) != "outside" {
			t.Fatalf("%q changed or removed a file outside the root", p)
		}
	})
}
