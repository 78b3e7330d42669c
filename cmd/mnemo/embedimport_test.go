package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// defaultHashing is the embedder --embedder hashing makes a collection
// with, as the embed package defines it.
func defaultHashing(t *testing.T) *embed.Hashing {
	t.Helper()
	h, err := embed.NewHashing(0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestImportEmbedsContent imports lines with content and no vector into a
// new collection made with --embedder hashing, across several embedding
// calls and commits: every record gets the embedding of its content, a
// line with both keeps its vector, and the collection records the
// embedder and its dimension.
func TestImportEmbedsContent(t *testing.T) {
	h := defaultHashing(t)
	dir := filepath.Join(t.TempDir(), "db")
	const n = 700 // more than two embedding calls of embedBatch in the first commit
	var in bytes.Buffer
	contents := map[string]string{}
	for i := range n {
		c := fmt.Sprintf("note %d about topic %d and colour %d", i, i%7, i%11)
		id := fmt.Sprintf("r%03d", i)
		contents[id] = c
		js, _ := json.Marshal(map[string]any{"id": id, "content": c, "metadata": map[string]any{"topic": float64(i % 7)}})
		in.Write(append(js, '\n'))
	}
	own := h.Vector("a vector of its own")
	mixed, _ := json.Marshal(jsonRecord{ID: "mixed", Vector: own, Content: "the content is not embedded"})
	in.Write(append(mixed, '\n'))
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"import", "--db", dir, "--collection", "notes", "--embedder", "hashing", "--batch", "600", "--file", writeTemp(t, in.String())}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got, want := out.String(), fmt.Sprintf("committed 600\ncommitted %d\n", n+1); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if !strings.Contains(errOut.String(), fmt.Sprintf("imported %d records, skipped 0 bad lines", n+1)) {
		t.Errorf("stderr %q", errOut.String())
	}
	// Into the existing collection, no flag is needed to embed.
	contents["late"] = "added later"
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "notes", "--file", writeTemp(t, `{"id":"late","content":"added later"}`)}, &out, &errOut); code != 0 {
		t.Fatalf("second import: exit %d: %s", code, errOut.String())
	}
	db, err := engine.Open(dir, &engine.Options{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection("notes")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := c.Config(); cfg.Embedder != h.Identity() || cfg.Dimension != h.Dimension() {
		t.Errorf("collection embedder %q, dimension %d; want %q, %d", cfg.Embedder, cfg.Dimension, h.Identity(), h.Dimension())
	}
	for id, content := range contents {
		r, ok, err := c.Get(context.Background(), id)
		if err != nil || !ok || r.Content != content || !slices.Equal(r.Vector, h.Vector(content)) {
			t.Fatalf("record %s: ok %v, err %v, content %q; want the embedding of %q", id, ok, err, r.Content, content)
		}
	}
	if r, _, err := c.Get(context.Background(), "mixed"); err != nil || !slices.Equal(r.Vector, own) {
		t.Errorf("a line with a vector and content: stored vector is not its own (%v)", err)
	}
}

// TestImportEmbedBadLines checks the lines that cannot be embedded: they
// are reported in line order, whether they wait for an embedding call or
// not, and stop the import unless --skip-bad.
func TestImportEmbedBadLines(t *testing.T) {
	h := defaultHashing(t)
	good := func(id string) string { return `{"id":"` + id + `","content":"text of ` + id + `"}` }
	short := `{"id":"short","vector":[1,0]}` // wrong dimension: found without embedding
	lines := []string{
		good("a"),
		`{"id":"zero","content":"?! -- ..."}`, // nothing to embed in the hashing embedder's eyes
		good("b"),
		short,
		`{"id":"blank","content":"  \t "}`,
		`{"id":"none"}`,
		good("a"), // twice in one batch
		good("c"),
	}
	zeroEmbeds := embed.IsZero(h.Vector("?! -- ..."))
	dir := filepath.Join(t.TempDir(), "db")
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--embedder", "hashing", "--file", writeTemp(t, strings.Join(lines, "\n"))}, &out, &errOut)
	firstBad := "line 4:"
	if zeroEmbeds {
		firstBad = "line 2: the text embeds to the zero vector"
	}
	if code != 1 || !strings.HasPrefix(errOut.String(), "mnemo import: "+firstBad) || out.Len() > 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and the first bad line, %q", code, out.String(), errOut.String(), firstBad)
	}

	out.Reset()
	errOut.Reset()
	code = run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--skip-bad", "--file", writeTemp(t, strings.Join(lines, "\n"))}, &out, &errOut)
	want := []string{"line 4: skipped", "dimension", "line 5: skipped: no vector, and no content to embed",
		"line 6: skipped: no vector, and no content to embed", `line 7: skipped: id "a" appears twice in one batch`}
	ids := []string{"a", "b", "c"}
	skipped := 4
	if zeroEmbeds {
		want = append([]string{"line 2: skipped: the text embeds to the zero vector"}, want...)
		skipped++
	} else {
		ids = append(ids, "zero")
	}
	want = append(want, fmt.Sprintf("imported %d records, skipped %d bad lines", len(ids), skipped))
	if code != 0 {
		t.Fatalf("--skip-bad: exit %d, stderr %q", code, errOut.String())
	}
	at := 0
	for _, w := range want {
		i := strings.Index(errOut.String()[at:], w)
		if i < 0 {
			t.Fatalf("--skip-bad: stderr lacks %q after byte %d (reports in line order):\n%s", w, at, errOut.String())
		}
		at += i + len(w)
	}
	slices.Sort(ids)
	if got := exportIDs(t, dir, "c"); !slices.Equal(got, ids) {
		t.Errorf("stored %q, want %q", got, ids)
	}
}

// TestImportWithoutEmbedder checks that a line without a vector is an
// error naming the reason in a collection with no recorded embedder and
// in one whose embedder the command line does not have, with and without
// --skip-bad, and that lines with vectors still go in.
func TestImportWithoutEmbedder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, emb := range map[string]string{"plain": "", "remote": "openai/text-embedding-3-small/2"} {
		if _, err := db.CreateCollection(context.Background(), name, mnemo.CollectionConfig{Dimension: 2, Embedder: emb}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data := writeTemp(t, `{"id":"a","vector":[1,0]}`+"\n"+`{"id":"b","content":"no vector here"}`+"\n"+`{"id":"c","vector":[0,1],"content":"both"}`+"\n")
	tests := []struct{ collection, reason string }{
		{"plain", `line 2: no vector, and collection "plain" has no recorded embedder to make one from the content`},
		{"remote", `line 2: no vector, and collection "remote" was made with the embedder openai/text-embedding-3-small/2, which the command line does not have`},
	}
	for _, tt := range tests {
		t.Run(tt.collection, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(t.Context(), []string{"import", "--db", dir, "--collection", tt.collection, "--file", data}, &out, &errOut)
			if code != 1 || !strings.HasPrefix(errOut.String(), "mnemo import: "+tt.reason) || strings.Count(errOut.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 1 and one line %q", code, errOut.String(), tt.reason)
			}
			if got := exportIDs(t, dir, tt.collection); len(got) != 0 {
				t.Errorf("stored %q after the error", got)
			}
			errOut.Reset()
			code = run(t.Context(), []string{"import", "--db", dir, "--collection", tt.collection, "--file", data, "--skip-bad"}, &out, &errOut)
			skipped := strings.Replace(tt.reason, "line 2: ", "line 2: skipped: ", 1)
			if code != 0 || !strings.HasPrefix(errOut.String(), skipped) {
				t.Errorf("--skip-bad: exit %d, stderr %q; want %q", code, errOut.String(), skipped)
			}
			if got := exportIDs(t, dir, tt.collection); !slices.Equal(got, []string{"a", "c"}) {
				t.Errorf("--skip-bad: stored %q, want [a c]", got)
			}
		})
	}
	// --embedder names what an existing collection must have been made with.
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"import", "--db", dir, "--collection", "plain", "--embedder", "hashing", "--file", data}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), `collection "plain" exists with no recorded embedder, not --embedder hashing`) {
		t.Errorf("--embedder into a collection without one: exit %d, stderr %q", code, errOut.String())
	}
}

// TestImportEmbedderUsage checks the usage errors of --embedder.
func TestImportEmbedderUsage(t *testing.T) {
	h := defaultHashing(t)
	dir := filepath.Join(t.TempDir(), "db")
	data := writeTemp(t, `{"id":"a","content":"some text"}`)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--embedder", "bert"}, `mnemo import: --embedder: unknown embedder "bert" (want hashing, openai or ollama)`},
		{[]string{"--embedder", "openai"}, `mnemo import: --embedder: --embedder openai needs --model and --dim (the model's dimension)`},
		{[]string{"--model", "m"}, `mnemo import: --embedder: --model and --embed-url need --embedder`},
		{[]string{"--embedder", "hashing", "--model", "m"}, `mnemo import: --embedder: --model and --embed-url are for --embedder openai or ollama`},
		{[]string{"--embedder", "hashing", "--dim", fmt.Sprint(h.Dimension() + 1)},
			fmt.Sprintf("mnemo import: --dim %d disagrees with --embedder hashing, whose dimension is %d", h.Dimension()+1, h.Dimension())},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), append([]string{"import", "--db", dir, "--collection", "c", "--file", data}, tt.args...), &out, &errOut)
		if code != 2 || !strings.HasPrefix(errOut.String(), tt.want+"\nUsage: mnemo import") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
	if exportable := run(t.Context(), []string{"stats", "--db", dir}, &bytes.Buffer{}, &bytes.Buffer{}); exportable != 1 {
		t.Errorf("a usage error created the database (stats exit %d)", exportable)
	}
	// A --dim that agrees is fine.
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "c", "--file", data, "--embedder", "hashing", "--dim", fmt.Sprint(h.Dimension())}, &out, &errOut); code != 0 {
		t.Errorf("--dim equal to the embedder's: exit %d, stderr %q", code, errOut.String())
	}
}
