package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// TestMissingDatabase checks that no command creates a database it was not
// asked to create: pointed at a missing directory, or at an empty one, each
// fails with exit status 1 naming the path and leaves the directory as it
// was.
func TestMissingDatabase(t *testing.T) {
	data := writeTemp(t, `{"id":"a","vector":[1,0]}`+"\n")
	tests := []struct {
		name string
		args []string // after --db DIR
		want []string // each must appear on standard error
	}{
		{"stats", []string{"stats"}, nil},
		{"export", []string{"export", "--collection", "c"}, nil},
		{"get", []string{"get", "--collection", "c", "a"}, nil},
		{"query", []string{"query", "--collection", "c", "--vector", "[1,0]"}, nil},
		{"query text", []string{"query", "--collection", "c", "--text", "hello"}, nil},
		{"verify", []string{"verify"}, nil},
		{"checkpoint", []string{"checkpoint"}, nil},
		{"checkpoint collection", []string{"checkpoint", "--collection", "c"}, nil},
		{"backup", []string{"backup", "--to", "somewhere"}, nil},
		{"compact", []string{"compact"}, nil},
		{"import without --dim", []string{"import", "--collection", "c", "--file", data}, []string{"--dim"}},
	}
	for _, tt := range tests {
		for _, empty := range []bool{false, true} {
			name := tt.name + "/missing directory"
			if empty {
				name = tt.name + "/empty directory"
			}
			t.Run(name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "typo", "dir")
				if empty {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				args := append([]string{tt.args[0], "--db", dir}, tt.args[1:]...)
				var out, errOut bytes.Buffer
				code := run(t.Context(), args, &out, &errOut)
				if code != 1 {
					t.Errorf("exit %d, want 1; stdout %q, stderr %q", code, out.String(), errOut.String())
				}
				msg := errOut.String()
				if !strings.HasPrefix(msg, "mnemo "+tt.args[0]+": ") || !strings.Contains(msg, dir) || strings.Count(msg, "\n") != 1 {
					t.Errorf("stderr %q: want one line \"mnemo %s: ...\" naming %s", msg, tt.args[0], dir)
				}
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("stderr %q lacks %q", msg, w)
					}
				}
				if !empty {
					if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
						t.Errorf("%s exists afterwards (%v)", filepath.Dir(dir), err)
					}
					return
				}
				if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
					t.Errorf("%s afterwards: %d entries, %v; want it empty", dir, len(ents), err)
				}
			})
		}
	}
	t.Run("import with --dim creates it", func(t *testing.T) { importCreates(t, data) })
}

// importCreates checks that import with --dim creates a missing database
// and its collection.
func importCreates(t *testing.T, data string) {
	dir := filepath.Join(t.TempDir(), "new", "db")
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--dim", "2", "--file", data}, &out, &errOut); code != 0 {
		t.Fatalf("import --dim: exit %d: %s", code, errOut.String())
	}
	out.Reset()
	if code := run(t.Context(), []string{"stats", "--db", dir}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "c: 1 records, dimension 2") {
		t.Fatalf("stats: exit %d: %s%s", code, out.String(), errOut.String())
	}
	// Into the existing database, a second collection also needs --dim.
	out.Reset()
	errOut.Reset()
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "d", "--file", data}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "--dim") {
		t.Fatalf("import of a new collection without --dim: exit %d: %s", code, errOut.String())
	}
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "d", "--dim", "2", "--metric", "l2", "--file", data}, &out, &errOut); code != 0 {
		t.Fatalf("import of a new collection with --dim: exit %d: %s", code, errOut.String())
	}
	if got := exportIDs(t, dir, "d"); len(got) != 1 || got[0] != "a" {
		t.Fatalf("collection d holds %q", got)
	}
}

// TestLockedDatabase checks that a database held open elsewhere is an
// error saying so, "mnemo CMD: ...", with exit status 1, for every
// command that opens one.
func TestLockedDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	data := writeTemp(t, `{"id":"a","vector":[1,0]}`+"\n")
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--dim", "2", "--file", data}, &out, &errOut); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut.String())
	}
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, args := range [][]string{
		{"stats"},
		{"export", "--collection", "c"},
		{"get", "--collection", "c", "a"},
		{"query", "--collection", "c", "--vector", "[1,0]"},
		{"verify"},
		{"checkpoint"},
		{"import", "--collection", "c", "--file", data},
	} {
		t.Run(args[0], func(t *testing.T) {
			args := append([]string{args[0], "--db", dir}, args[1:]...)
			var out, errOut bytes.Buffer
			code := run(t.Context(), args, &out, &errOut)
			msg := errOut.String()
			if code != 1 || !strings.HasPrefix(msg, "mnemo "+args[0]+": ") || !strings.Contains(msg, "already open") || strings.Count(msg, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line \"mnemo %s: ... already open ...\"", code, out.String(), msg, args[0])
			}
		})
	}
}

// exportIDs exports collection name of the database in dir and returns the
// ids, sorted.
func exportIDs(t *testing.T, dir, name string) []string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"export", "--db", dir, "--collection", name}, &out, &errOut); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errOut.String())
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var r jsonRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("export printed %q: %v", l, err)
		}
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestQueryText checks how query --text chooses its mode by the
// collection's recorded embedder: hybrid with the offline hashing
// embedder; text (BM25) with none, or with one the command line does not
// have (saying so on stderr); vector when the collection has no full-text
// index. Vector and hybrid mode, which must embed the text, are an error
// without the embedder, exit 1, that says what to do instead and prints no
// hits.
func TestQueryText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	h, err := embed.NewHashing(64)
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]mnemo.CollectionConfig{
		"hashed": {Dimension: 64, Embedder: h.Identity()},
		"plain":  {Dimension: 64},
		"remote": {Dimension: 64, Embedder: "openai/text-embedding-3-small/64"},
		"notext": {Dimension: 64, Embedder: h.Identity(), Text: mnemo.TextConfig{Disabled: true}},
	} {
		c, err := db.CreateCollection(context.Background(), name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var recs []mnemo.Record
		for i, s := range []string{"the cat sat on the mat", "stock prices fell sharply", "a kitten sleeps on a rug"} {
			recs = append(recs, mnemo.Record{ID: fmt.Sprint("r", i), Vector: h.Vector(s), Content: s})
		}
		if _, err := c.Upsert(context.Background(), recs...); err != nil {
			t.Fatal(err)
		}
	}
	// A collection of the first version of the offline embedder, which
	// the command line still runs.
	h1, err := embed.NewHashingV1(64)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := db.CreateCollection(context.Background(), "hashedv1", mnemo.CollectionConfig{Dimension: 64, Embedder: h1.Identity()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v1.Upsert(context.Background(), mnemo.Record{ID: "r0", Vector: h1.Vector("the cat sat on the mat"), Content: "the cat sat on the mat"},
		mnemo.Record{ID: "r1", Vector: h1.Vector("stock prices fell sharply"), Content: "stock prices fell sharply"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		collection, mode string
		code             int
		stdout           string // the first hit's line, or "" for none
		stderr           []string
	}{
		{"hashed", "", 0, "  r0  the cat sat on the mat", nil}, // hybrid: first on both sides
		{"hashed", "vector", 0, "1.0000  r0  the cat sat on the mat", nil},
		{"hashedv1", "vector", 0, "1.0000  r0  the cat sat on the mat", nil}, // embedded by version 1
		{"hashedv1", "", 0, "  r0  the cat sat on the mat", nil},
		{"plain", "", 0, "  r0  the cat sat on the mat", nil},
		{"plain", "hybrid", 1, "", []string{`mnemo query: collection "plain" has no recorded embedder`, "--mode text"}},
		{"plain", "vector", 1, "", []string{`mnemo query: collection "plain" has no recorded embedder`, "give a vector"}},
		{"remote", "", 0, "  r0  the cat sat on the mat", []string{`mnemo query: note: a text without a vector is matched by its words only (text mode): collection "remote" was made with the embedder openai/text-embedding-3-small/64`}},
		{"remote", "text", 0, "  r0  the cat sat on the mat", nil},
		{"notext", "", 0, "1.0000  r0  the cat sat on the mat", nil}, // no full-text index: the embedding alone, as before it existed
		{"notext", "text", 1, "", []string{`mnemo query: mnemo: bad query: collection "notext" has no full-text index`}},
		{"notext", "hybrid", 1, "", []string{`mnemo query: mnemo: bad query: collection "notext" has no full-text index`}},
		{"remote", "hybrid", 1, "", []string{`mnemo query: collection "remote" was made with the embedder openai/text-embedding-3-small/64, which the command line does not have`, "--mode text"}},
	}
	for _, tt := range tests {
		t.Run(tt.collection+"/"+tt.mode, func(t *testing.T) {
			args := []string{"query", "--db", dir, "--collection", tt.collection, "--text", "the cat sat on the mat", "--k", "1"}
			if tt.mode != "" {
				args = append(args, "--mode", tt.mode)
			}
			var out, errOut bytes.Buffer
			code := run(t.Context(), args, &out, &errOut)
			if code != tt.code || !strings.Contains(out.String(), tt.stdout) || tt.stdout == "" && out.Len() > 0 || tt.stdout != "" && strings.Count(out.String(), "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one line with %q", code, out.String(), errOut.String(), tt.code, tt.stdout)
			}
			if len(tt.stderr) == 0 && errOut.Len() > 0 {
				t.Errorf("stderr %q, want none", errOut.String())
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut.String(), w) || strings.Count(errOut.String(), "\n") != 1 {
					t.Errorf("stderr %q: want one line with %q", errOut.String(), w)
				}
			}
		})
	}
	// --vector still queries the collection without an embedder.
	var out, errOut bytes.Buffer
	vec, _ := json.Marshal(h.Vector("stock prices fell sharply"))
	if code := run(t.Context(), []string{"query", "--db", dir, "--collection", "plain", "--vector", string(vec), "--k", "1"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "r1") {
		t.Errorf("--vector: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	// With a vector, a text adds its side whatever the embedder: hybrid,
	// and no note.
	out.Reset()
	if code := run(t.Context(), []string{"query", "--db", dir, "--collection", "remote", "--vector", string(vec), "--text", "stock prices", "--k", "1", "--fusion", "rrf"}, &out, &errOut); code != 0 || out.String() != "0.0164  r1  stock prices fell sharply\n" || errOut.Len() > 0 {
		t.Errorf("--vector --text: exit %d, stdout %q, stderr %q; want r1 first on both sides: w/61 + (1-w)/61 = 1/61", code, out.String(), errOut.String())
	}
}

// TestReadCommandsWriteNothing: stats, get, query, export and verify open
// the database read-only and leave every file as it was.
func TestReadCommandsWriteNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	data := writeTemp(t, `{"id":"a","vector":[1,0],"content":"alpha"}`+"\n"+`{"id":"b","vector":[0,1]}`+"\n")
	if code := run(t.Context(), []string{"import", "--db", db, "--collection", "c", "--dim", "2", "--file", data}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("import exit %d", code)
	}
	snapshot := func() string {
		var b strings.Builder
		filepath.WalkDir(db, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() != "LOCK" {
				fi, _ := d.Info()
				fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
		return b.String()
	}
	before := snapshot()
	for _, args := range [][]string{
		{"stats", "--db", db},
		{"get", "--db", db, "--collection", "c", "a"},
		{"query", "--db", db, "--collection", "c", "--vector", "[1,0]"},
		{"export", "--db", db, "--collection", "c"},
		{"verify", "--db", db},
	} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		if after := snapshot(); after != before {
			t.Fatalf("%v changed the database:\nbefore\n%safter\n%s", args, before, after)
		}
	}
}
