package docstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

var ctx = context.Background()

func openDocs(t *testing.T, dir string) *Store {
	t.Helper()
	d, err := Open(dir, &Options{MaxSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDocuments(t *testing.T) {
	for _, mode := range []string{"memory", "dir"} {
		t.Run(mode, func(t *testing.T) {
			dir := ""
			if mode == "dir" {
				dir = t.TempDir()
			}
			d := openDocs(t, dir)
			if err := d.Write(ctx, "/preferences.md", "Use concise responses."); err != nil {
				t.Fatal(err)
			}
			if c, err := d.Read(ctx, "preferences.md"); err != nil || c != "Use concise responses." {
				t.Fatalf("Read = %q, %v", c, err)
			}
			if err := d.Edit(ctx, "/preferences.md", "concise", "detailed"); err != nil {
				t.Fatal(err)
			}
			got, _ := d.SearchFullText(ctx, "DETAILED", 0)
			if !reflect.DeepEqual(got, []Document{{"/preferences.md", "Use detailed responses."}}) {
				t.Fatalf("SearchFullText = %v", got)
			}
			d.Write(ctx, "/notes/a.md", "a a")
			if err := d.Edit(ctx, "/notes/a.md", "a", "b"); !errors.Is(err, ErrAmbiguous) {
				t.Fatalf("two matches: %v", err)
			}
			if err := d.Edit(ctx, "/notes/a.md", "zzz", "b"); !errors.Is(err, ErrNoMatch) {
				t.Fatalf("no match: %v", err)
			}
			if c, _ := d.Read(ctx, "/notes/a.md"); c != "a a" {
				t.Fatalf("a failed edit changed the file to %q", c)
			}
			if _, err := d.Read(ctx, "/missing.md"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing: %v", err)
			}
			if err := d.Write(ctx, "/big.md", strings.Repeat("x", 1001)); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("too large: %v", err)
			}
			d.Store(ctx, "stored note")
			paths, _ := d.ListAll(ctx)
			if len(paths) != 3 || !strings.HasPrefix(paths[0], "/note-") || paths[1] != "/notes/a.md" || paths[2] != "/preferences.md" {
				t.Fatalf("ListAll = %v", paths)
			}
			if p, _ := d.ListPaths(ctx, "notes"); !reflect.DeepEqual(p, []string{"/notes/a.md"}) {
				t.Fatalf("ListPaths(notes) = %v", p)
			}
			if s, _ := d.Search(ctx, "stored", 5); !reflect.DeepEqual(s, []string{"stored note"}) {
				t.Fatalf("Search = %v", s)
			}
			if err := d.Delete(ctx, "notes/a.md"); err != nil {
				t.Fatal(err)
			}
			if err := d.Delete(ctx, "/notes/a.md"); err != nil {
				t.Fatalf("deleting an absent document: %v", err)
			}
		})
	}
}

func TestPathAttacks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.md"))
	os.Symlink(outside, filepath.Join(dir, "linkdir"))
	d := openDocs(t, dir)
	attacks := []string{
		"", "/", "..", "../x.md", "/a/../../x.md", "a/..", "%2e%2e/x.md", "%2E%2e%2fx.md", "a%2fb", "..\\x.md",
		"a\\b.md", "x\x00.md", "C:\\x.md", "c:/x.md", "//server/share/x.md", "/.hidden.md", "/a/.git/config", "\xff.md",
		strings.Repeat("a/", 600),
	}
	for _, p := range attacks {
		for name, op := range map[string]func() error{
			"write":  func() error { return d.Write(ctx, p, "x") },
			"read":   func() error { _, err := d.Read(ctx, p); return err },
			"edit":   func() error { return d.Edit(ctx, p, "x", "y") },
			"delete": func() error { return d.Delete(ctx, p) },
		} {
			err := op()
			if !errors.Is(err, ErrBadPath) {
				t.Errorf("%s(%q) = %v, want ErrBadPath", name, p, err)
			}
			if err != nil && (strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), outside)) {
				t.Errorf("%s(%q) leaks a host path: %v", name, p, err)
			}
		}
	}
	// Symlinks that lead out of the root are never followed.
	for _, p := range []string{"/link.md", "/linkdir/secret.txt"} {
		c, err := d.Read(ctx, p)
		if err == nil || c == "secret" {
			t.Errorf("Read(%q) = %q, %v: escaped the root", p, c, err)
		}
		if err != nil && strings.Contains(err.Error(), outside) {
			t.Errorf("Read(%q) leaks a host path: %v", p, err)
		}
		if err := d.Write(ctx, p, "overwrite"); err == nil {
			if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
				t.Errorf("Write(%q) changed a file outside the root", p)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Fatal("a file outside the root was changed")
	}
}

func TestDirectoryIsTheSourceOfTruth(t *testing.T) {
	dir := t.TempDir()
	d := openDocs(t, dir)
	os.WriteFile(filepath.Join(dir, "by-hand.md"), []byte("copied in by hand"), 0o644)
	os.WriteFile(filepath.Join(dir, "report.pdf"), []byte{0x25, 0x50, 0xff, 0xfe, 0x00}, 0o644)
	os.WriteFile(filepath.Join(dir, ".DS_Store"), []byte{0xff}, 0o644)
	paths, _ := d.ListAll(ctx)
	if !reflect.DeepEqual(paths, []string{"/by-hand.md"}) {
		t.Fatalf("ListAll = %v", paths)
	}
	bad, _ := d.UnreadablePaths(ctx)
	if !reflect.DeepEqual(bad, []string{"/report.pdf"}) {
		t.Fatalf("UnreadablePaths = %v", bad)
	}
	if c, err := d.Read(ctx, "by-hand.md"); err != nil || c != "copied in by hand" {
		t.Fatalf("Read = %q, %v", c, err)
	}
	if _, err := d.Read(ctx, "report.pdf"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("reading a binary file: %v", err)
	}
	d.Write(ctx, "/sub/dir/new.md", "written")
	if b, err := os.ReadFile(filepath.Join(dir, "sub", "dir", "new.md")); err != nil || string(b) != "written" {
		t.Fatalf("file on disk: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub", "dir"))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// TestConcurrentUse runs every operation from several goroutines on a
// store in a directory, which reads without a lock, and on one in memory,
// which reads under one, under the race detector.
func TestConcurrentUse(t *testing.T) {
	var docs []*Store
	for _, dir := range []string{t.TempDir(), ""} {
		d, err := Open(dir, &Options{Semantic: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		d.Write(ctx, "/counter.md", "n=0")
		docs = append(docs, d)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				fact := fmt.Sprintf("worker %d remembers fact %d", w, i)
				for _, d := range docs {
					p := fmt.Sprintf("/w%d/%d.md", w, i)
					d.Write(ctx, p, fact)
					d.Edit(ctx, p, "remembers", "recalls")
					d.Read(ctx, p)
					d.SearchFullText(ctx, "fact", 5)
					d.SearchSemantic(ctx, fact, 3)
					d.ListAll(ctx)
				}
			}
		}(w)
	}
	wg.Wait()
	for _, d := range docs {
		paths, _ := d.ListPaths(ctx, "/w")
		edited, _ := d.SearchFullText(ctx, "recalls", 100)
		if len(paths) != 80 || len(edited) != 80 {
			t.Fatalf("%d documents, %d edited", len(paths), len(edited))
		}
	}
}
