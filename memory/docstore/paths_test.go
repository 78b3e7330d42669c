package docstore

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPathRules runs one table of path collisions against the in-memory
// store and a directory, which must agree on every error and on what is
// stored after. Before, Write("/notes/") made a document /notes, and
// /proj and /proj/a.md could both exist in memory while the second write
// failed in a directory with a raw "mkdirat: file exists".
func TestPathRules(t *testing.T) {
	write := func(p string) func(d *Store) error {
		return func(d *Store) error { return d.Write(ctx, p, "text") }
	}
	read := func(p string) func(d *Store) error {
		return func(d *Store) error { _, err := d.Read(ctx, p); return err }
	}
	edit := func(p string) func(d *Store) error {
		return func(d *Store) error { return d.Edit(ctx, p, "text", "new") }
	}
	del := func(p string) func(d *Store) error {
		return func(d *Store) error { return d.Delete(ctx, p) }
	}
	tests := []struct {
		name    string
		setup   []string // documents written first
		deleted []string // then deleted
		op      func(d *Store) error
		want    error  // nil: succeeds
		naming  string // a path the error must name
		after   []string
	}{
		{"write ending in a slash", nil, nil, write("/notes/"), ErrBadPath, "/notes/", nil},
		{"read ending in a slash", []string{"/notes/a.md"}, nil, read("/notes/"), ErrBadPath, "/notes/", []string{"/notes/a.md"}},
		{"edit ending in a slash", []string{"/notes/a.md"}, nil, edit("notes/"), ErrBadPath, "notes/", []string{"/notes/a.md"}},
		{"delete ending in a slash", []string{"/notes/a.md"}, nil, del("/notes/"), ErrBadPath, "/notes/", []string{"/notes/a.md"}},
		{"write under a document", []string{"/proj"}, nil, write("/proj/a.md"), ErrPathConflict, "/proj", []string{"/proj"}},
		{"write deep under a document", []string{"/proj"}, nil, write("proj/sub/a.md"), ErrPathConflict, "/proj", []string{"/proj"}},
		{"write where a folder is", []string{"/proj/a.md"}, nil, write("/proj"), ErrPathConflict, "/proj", []string{"/proj/a.md"}},
		{"write where a deep folder is", []string{"/proj/sub/a.md"}, nil, write("/proj/sub"), ErrPathConflict, "/proj/sub", []string{"/proj/sub/a.md"}},
		{"read a folder", []string{"/proj/a.md"}, nil, read("/proj"), ErrPathConflict, "/proj", []string{"/proj/a.md"}},
		{"edit a folder", []string{"/proj/a.md"}, nil, edit("/proj"), ErrPathConflict, "/proj", []string{"/proj/a.md"}},
		{"delete a folder", []string{"/proj/a.md"}, nil, del("/proj"), ErrPathConflict, "/proj", []string{"/proj/a.md"}},
		{"read under a document", []string{"/proj"}, nil, read("/proj/a.md"), ErrNotFound, "/proj/a.md", []string{"/proj"}},
		{"delete under a document", []string{"/proj"}, nil, del("/proj/a.md"), nil, "", []string{"/proj"}},
		{"write where a folder was", []string{"/proj/a.md"}, []string{"/proj/a.md"}, write("/proj"), nil, "", []string{"/proj"}},
		{"read where a folder was", []string{"/proj/a.md"}, []string{"/proj/a.md"}, read("/proj"), ErrNotFound, "/proj", nil},
		{"folder kept by another document", []string{"/proj/a.md", "/proj/b.md"}, []string{"/proj/a.md"}, write("/proj"), ErrPathConflict, "/proj", []string{"/proj/b.md"}},
		{"a sibling with a longer name", []string{"/proj"}, nil, write("/project/a.md"), nil, "", []string{"/proj", "/project/a.md"}},
		{"a document and a folder side by side", []string{"/proj.md"}, nil, write("/proj/a.md"), nil, "", []string{"/proj.md", "/proj/a.md"}},
	}
	for _, tt := range tests {
		for _, mode := range []string{"memory", "dir"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				dir := ""
				if mode == "dir" {
					dir = t.TempDir()
				}
				d := openDocs(t, dir)
				for _, p := range tt.setup {
					if err := d.Write(ctx, p, "text"); err != nil {
						t.Fatal(err)
					}
				}
				for _, p := range tt.deleted {
					if err := d.Delete(ctx, p); err != nil {
						t.Fatal(err)
					}
				}
				err := tt.op(d)
				if (tt.want == nil) != (err == nil) || !errors.Is(err, tt.want) {
					t.Fatalf("got %v, want %v", err, tt.want)
				}
				if err != nil && !strings.Contains(err.Error(), tt.naming) {
					t.Fatalf("%v does not name %s", err, tt.naming)
				}
				if err != nil && dir != "" && strings.Contains(err.Error(), dir) {
					t.Fatalf("%v names a host path", err)
				}
				if got, _ := d.ListAll(ctx); !reflect.DeepEqual(got, tt.after) {
					t.Fatalf("ListAll after = %q, want %q", got, tt.after)
				}
			})
		}
	}
}

// TestSkippedFilesAreLogged: with a Logger, every file listings skip is
// warned of by path, as the original warns; without one nothing is
// logged (and nothing fails).
func TestSkippedFilesAreLogged(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("alpha"), 0o644)
	os.WriteFile(filepath.Join(dir, "scan.pdf"), []byte("%PDF-\xff\xfe"), 0o644)
	var buf bytes.Buffer
	d, err := Open(dir, &Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if paths, _ := d.ListAll(ctx); !reflect.DeepEqual(paths, []string{"/a.md"}) {
		t.Fatalf("ListAll = %q", paths)
	}
	out := buf.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "path=/scan.pdf") || strings.Contains(out, "a.md") {
		t.Fatalf("log = %q, want one warning naming /scan.pdf", out)
	}
	if strings.Contains(out, dir) {
		t.Fatalf("log names a host path: %q", out)
	}
	silent := openDocs(t, dir)
	if paths, _ := silent.ListAll(ctx); !reflect.DeepEqual(paths, []string{"/a.md"}) {
		t.Fatalf("ListAll without a logger = %q", paths)
	}
}

// TestPathRulesRandom runs the same random stream of writes, reads, edits
// and deletes over a few colliding paths against the in-memory store and
// a directory: every call must fail with the same sentinel (or succeed)
// on both, and both must list the same documents after each call.
func TestPathRulesRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	segs := []string{"a", "b", "a.md"}
	randPath := func() string {
		var parts []string
		for range 1 + r.IntN(3) {
			parts = append(parts, segs[r.IntN(len(segs))])
		}
		p := "/" + strings.Join(parts, "/")
		if r.IntN(8) == 0 {
			p += "/"
		}
		return p
	}
	sentinels := []error{ErrBadPath, ErrPathConflict, ErrNotFound, ErrNoMatch, ErrAmbiguous, ErrTooLarge, ErrNotRegular, ErrInvalid}
	class := func(err error) string {
		if err == nil {
			return "ok"
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return s.Error()
			}
		}
		return "unclassified: " + err.Error()
	}
	for iter := range 40 {
		mem, disk := openDocs(t, ""), openDocs(t, t.TempDir())
		for step := range 30 {
			p := randPath()
			var op func(d *Store) error
			var name string
			switch r.IntN(4) {
			case 0, 1:
				name, op = "Write", func(d *Store) error { return d.Write(ctx, p, "text") }
			case 2:
				name, op = "Delete", func(d *Store) error { return d.Delete(ctx, p) }
			default:
				name, op = "Edit", func(d *Store) error { return d.Edit(ctx, p, "text", "text") }
			}
			cm, cd := class(op(mem)), class(op(disk))
			if cm != cd || strings.HasPrefix(cm, "unclassified") {
				t.Fatalf("seed %d iter %d step %d: %s(%q): in memory %s, on disk %s", seed, iter, step, name, p, cm, cd)
			}
			lm, _ := mem.ListAll(ctx)
			ld, _ := disk.ListAll(ctx)
			if !reflect.DeepEqual(lm, ld) {
				t.Fatalf("seed %d iter %d step %d: after %s(%q): in memory %q, on disk %q", seed, iter, step, name, p, lm, ld)
			}
		}
	}
}
