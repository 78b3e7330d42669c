package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// queryNotes are the records of the query tests: content only, embedded by
// import.
var queryNotes = []struct{ id, content, source string }{
	{"n1", "Paul works at Google as a search engineer", "chat"},
	{"n2", "The team meets every Monday to plan the week", "calendar"},
	{"n3", "Alice prefers tea over coffee in the morning", "chat"},
	{"n4", "The quarterly report is due on Friday", "email"},
	{"n5", "Paul moved to Lisbon last spring", "chat"},
	{"n6", "Coffee with Paul on Friday morning", "calendar"},
	{"n7", "Lisbon trams are yellow", "web"},
	{"n8", "Search engines rank documents by relevance", "web"},
}

// importNotes imports queryNotes into collection "notes" of a new
// database, made with --embedder hashing, and returns its directory.
func importNotes(t *testing.T) string {
	t.Helper()
	var in strings.Builder
	for _, n := range queryNotes {
		js, _ := json.Marshal(map[string]any{"id": n.id, "content": n.content, "metadata": map[string]any{"source": n.source}})
		in.Write(append(js, '\n'))
	}
	dir := filepath.Join(t.TempDir(), "db")
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "notes", "--embedder", "hashing", "--file", writeTemp(t, in.String())}, &out, &errOut); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut.String())
	}
	return dir
}

// engineAnswer runs q on the collection directly, embedding q.Text when
// q's mode needs a vector and has none, as the command line should.
func engineAnswer(t *testing.T, dir string, q mnemo.Query) []mnemo.Hit {
	t.Helper()
	db, err := engine.Open(dir, &engine.Options{MustExist: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection("notes")
	if err != nil {
		t.Fatal(err)
	}
	if q.Mode != mnemo.ModeText && q.Vector == nil {
		q.Vector = defaultHashing(t).Vector(q.Text)
	}
	if q.Mode == mnemo.ModeVector {
		q.Text = ""
	}
	hits, err := c.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// decodeAnswer decodes one JSON line of query's output, refusing fields
// the documented shape does not have.
func decodeAnswer(t *testing.T, line string) jsonAnswer {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	var a jsonAnswer
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return a
}

// sameHits compares the command's hits with the engine's: ids, order,
// scores, ranks and, when the query had a vector, distances.
func sameHits(t *testing.T, got []jsonHit, want []mnemo.Hit, withVector bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d hits, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.Record.ID || g.Content != w.Record.Content || math.Abs(g.Score-w.Score) > 1e-9 ||
			g.VectorRank != w.VectorRank || g.TextRank != w.TextRank || g.Metadata["source"] == nil {
			t.Errorf("hit %d: %+v, want %s (%q) score %v ranks %d/%d with metadata", i, g, w.Record.ID, w.Record.Content, w.Score, w.VectorRank, w.TextRank)
		}
		if (g.TextScore != nil) != (w.TextRank > 0) || g.TextScore != nil && math.Abs(*g.TextScore-w.TextScore) > 1e-9 {
			t.Errorf("hit %d: text score %v, want %v (text rank %d)", i, g.TextScore, w.TextScore, w.TextRank)
		}
		if (g.Distance != nil) != withVector || (g.Similarity != nil) != withVector {
			t.Errorf("hit %d: distance %v, similarity %v; want them exactly when the query has a vector (%v)", i, g.Distance, g.Similarity, withVector)
		}
		if withVector && math.Abs(float64(*g.Distance-w.Distance)) > 1e-5 {
			t.Errorf("hit %d: distance %v, want %v", i, *g.Distance, w.Distance)
		}
	}
}

// TestQueryModes runs query --text --json in each mode and with the fusion
// flags, and checks each answer against the engine's own for the same
// query, and the plain output against the JSON.
func TestQueryModes(t *testing.T) {
	dir := importNotes(t)
	const text = "Paul coffee morning"
	fusion := mnemo.Fusion{Method: mnemo.FusionWeighted, VectorWeight: 0.8, Depth: 4}
	tests := []struct {
		name       string
		flags      []string
		q          mnemo.Query
		withVector bool
	}{
		{"default is hybrid", nil, mnemo.Query{Mode: mnemo.ModeHybrid}, true},
		{"text", []string{"--mode", "text"}, mnemo.Query{Mode: mnemo.ModeText}, false},
		{"vector", []string{"--mode", "vector"}, mnemo.Query{Mode: mnemo.ModeVector}, true},
		{"hybrid", []string{"--mode", "hybrid"}, mnemo.Query{Mode: mnemo.ModeHybrid}, true},
		{"hybrid weighted, depth", []string{"--fusion", "weighted", "--vector-weight", "0.8", "--depth", "4"},
			mnemo.Query{Mode: mnemo.ModeHybrid, Fusion: fusion}, true},
		{"hybrid rrf", []string{"--fusion", "rrf"}, mnemo.Query{Mode: mnemo.ModeHybrid, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF}}, true},
		{"hybrid rrf weighted", []string{"--fusion", "rrf", "--vector-weight", "0.2"},
			mnemo.Query{Mode: mnemo.ModeHybrid, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF, VectorWeight: 0.2}}, true},
		{"filter", []string{"--filter", `{"source": "calendar"}`}, mnemo.Query{Mode: mnemo.ModeHybrid, Filter: mustFilter(t, `{"source": "calendar"}`)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"query", "--db", dir, "--collection", "notes", "--text", text, "--k", "4"}, tt.flags...)
			var out, errOut bytes.Buffer
			if code := run(t.Context(), append(args, "--json"), &out, &errOut); code != 0 || errOut.Len() > 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			if strings.Count(out.String(), "\n") != 1 || strings.Contains(out.String(), `"id":null`) {
				t.Fatalf("--json printed %q: want one line and no id", out.String())
			}
			got := decodeAnswer(t, out.String())
			q := tt.q
			q.Text, q.K = text, 4
			want := engineAnswer(t, dir, q)
			if len(want) == 0 {
				t.Fatal("the engine found nothing: the test data is wrong")
			}
			sameHits(t, got.Hits, want, tt.withVector)
			for _, h := range got.Hits {
				if tt.q.Filter != nil && h.Metadata["source"] != "calendar" {
					t.Errorf("hit %s of source %v passed the filter", h.ID, h.Metadata["source"])
				}
			}
			// The plain output lists the same hits: "score  id  content".
			out.Reset()
			if code := run(t.Context(), args, &out, &errOut); code != 0 {
				t.Fatalf("plain: exit %d: %s", code, errOut.String())
			}
			var plain strings.Builder
			for _, h := range got.Hits {
				fmt.Fprintf(&plain, "%.4f  %s  %s\n", h.Score, h.ID, h.Content)
			}
			if out.String() != plain.String() {
				t.Errorf("plain output\n%s\nwant\n%s", out.String(), plain.String())
			}
		})
	}
	// Text mode finds only records holding a query word.
	var out, errOut bytes.Buffer
	run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--text", "trams", "--mode", "text", "--json"}, &out, &errOut)
	if a := decodeAnswer(t, out.String()); len(a.Hits) != 1 || a.Hits[0].ID != "n7" {
		t.Errorf("text mode for \"trams\": %+v, want n7 alone", a.Hits)
	}
	// A vector and a text: the text adds its side to the vector's.
	vec, _ := json.Marshal(defaultHashing(t).Vector("Lisbon"))
	out.Reset()
	if code := run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--vector", string(vec), "--text", "search", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("--vector --text: exit %d: %s", code, errOut.String())
	}
	var v []float32
	json.Unmarshal(vec, &v)
	sameHits(t, decodeAnswer(t, out.String()).Hits, engineAnswer(t, dir, mnemo.Query{Mode: mnemo.ModeHybrid, Vector: v, Text: "search"}), true)
}

func mustFilter(t *testing.T, s string) *mnemo.Filter {
	t.Helper()
	f, err := mnemo.ParseFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestQueryFile answers a file of queries: one JSON line per query, in
// order, with its id as given, its own k and filter, and a bad line that
// stops the run (after the answers before it) or, with --skip-bad, is
// reported and skipped.
func TestQueryFile(t *testing.T) {
	dir := importNotes(t)
	vec, _ := json.Marshal(defaultHashing(t).Vector("Lisbon trams"))
	good := []string{
		`{"id": 1, "text": "Paul coffee morning"}`,
		`{"id": "two", "text": "Paul", "filter": {"source": "chat"}, "k": 2}`,
		``,
		`{"text": "Friday", "k": 1}`,
		`{"id": [3], "vector": ` + string(vec) + `, "k": 3}`,
	}
	var v []float32
	json.Unmarshal(vec, &v)
	wants := []struct {
		id         string // as printed
		q          mnemo.Query
		withVector bool
	}{
		{"1", mnemo.Query{Mode: mnemo.ModeHybrid, Text: "Paul coffee morning", K: 10}, true},
		{`"two"`, mnemo.Query{Mode: mnemo.ModeHybrid, Text: "Paul", K: 2, Filter: mustFilter(t, `{"source": "chat"}`)}, true},
		{"", mnemo.Query{Mode: mnemo.ModeHybrid, Text: "Friday", K: 1}, true},
		{"[3]", mnemo.Query{Mode: mnemo.ModeVector, Vector: v, K: 3}, true},
	}
	check := func(t *testing.T, out string, n int) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			lines = nil
		}
		if len(lines) != n {
			t.Fatalf("%d answers, want %d:\n%s", len(lines), n, out)
		}
		for i, l := range lines {
			a := decodeAnswer(t, l)
			if string(a.ID) != wants[i].id {
				t.Errorf("answer %d: id %s, want %s", i, a.ID, wants[i].id)
			}
			sameHits(t, a.Hits, engineAnswer(t, dir, wants[i].q), wants[i].withVector)
			if i == 1 {
				for _, h := range a.Hits {
					if h.Metadata["source"] != "chat" {
						t.Errorf("answer %d: hit %s of source %v passed the filter", i, h.ID, h.Metadata["source"])
					}
				}
			}
		}
	}
	t.Run("good", func(t *testing.T) {
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--queries", writeTemp(t, strings.Join(good, "\n"))}, &out, &errOut)
		if code != 0 || errOut.Len() > 0 {
			t.Fatalf("exit %d, stderr %q", code, errOut.String())
		}
		check(t, out.String(), 4)
	})
	bad := []struct {
		name, line, msg string
	}{
		{"unknown field", `{"id": 9, "txt": "typo"}`, `json: unknown field "txt"`},
		{"no query", `{"id": 9}`, `no "text" and no "vector"`},
		{"two values", `{"text": "a"} {"text": "b"}`, "text after the JSON value"},
		{"invalid UTF-8", "{\"text\": \"caf\xe9\"}", "invalid UTF-8 at byte 14"},
		{"bad filter", `{"text": "a", "filter": {"x": {"$near": 1}}}`, "mnemo: bad filter"},
		{"k zero", `{"text": "a", "k": 0}`, "k 0, want > 0"},
		{"wrong dimension", `{"vector": [1, 0]}`, "query: mnemo: dimension mismatch: got 2, want"},
		{"not an object", `["text"]`, "json: cannot unmarshal array"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			// The bad line is line 4 of the file: after two answers and a
			// blank line.
			lines := append(append(append([]string{}, good[:3]...), b.line), good[3:]...)
			file := writeTemp(t, strings.Join(lines, "\n"))
			var out, errOut bytes.Buffer
			code := run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--queries", file}, &out, &errOut)
			want := "mnemo query: line 4: " + b.msg
			if code != 1 || !strings.HasPrefix(errOut.String(), want) || !strings.HasSuffix(errOut.String(), "(2 queries answered before it)\n") {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q...", code, errOut.String(), want)
			}
			check(t, out.String(), 2)

			out.Reset()
			errOut.Reset()
			code = run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--queries", file, "--skip-bad"}, &out, &errOut)
			want = "line 4: skipped: " + b.msg
			if code != 0 || !strings.HasPrefix(errOut.String(), want) || !strings.HasSuffix(errOut.String(), "answered 4 queries, skipped 1 bad lines\n") {
				t.Errorf("--skip-bad: exit %d, stderr %q; want exit 0 and %q...", code, errOut.String(), want)
			}
			check(t, out.String(), 4)
		})
	}
}

// TestQueryUsage checks query's usage errors: exit 2, the problem and
// the usage line.
func TestQueryUsage(t *testing.T) {
	base := []string{"query", "--db", "x", "--collection", "c"}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "give --vector, --text or both, or --queries"},
		{[]string{"--queries", "f", "--text", "a"}, "--queries goes without --vector and --text: each line holds its query"},
		{[]string{"--text", "a", "--skip-bad"}, "--skip-bad goes with --queries"},
		{[]string{"--text", "a", "--mode", "fuzzy"}, `--mode "fuzzy", want text, vector or hybrid`},
		{[]string{"--text", "a", "--vector", "[1]", "--mode", "vector"}, "--mode vector takes --vector or --text, not both"},
		{[]string{"--vector", "[1]", "--mode", "text"}, "--mode text needs --text"},
		{[]string{"--vector", "[1]", "--mode", "hybrid"}, "--mode hybrid needs --text"},
		{[]string{"--text", "a", "--k", "0"}, "--k 0, want > 0"},
		{[]string{"--text", "a", "--ef", "-1"}, "--ef -1, want >= 0"},
		{[]string{"--text", "a", "--fusion", "max"}, `--fusion "max", want weighted or rrf`},
		{[]string{"--text", "a", "--vector-weight", "1"}, "--vector-weight 1, want a number in (0, 1)"},
		{[]string{"--text", "a", "--vector-weight", "NaN"}, "--vector-weight NaN, want a number in (0, 1)"},
		{[]string{"--text", "a", "--depth", "-5"}, "--depth -5, want >= 0"},
		{[]string{"--text", "a", "--mode", "text", "--depth", "5"}, "--fusion, --vector-weight and --depth tune hybrid queries, not --mode text"},
		{[]string{"--text", "a", "--mode", "vector", "--fusion", "rrf"}, "--fusion, --vector-weight and --depth tune hybrid queries, not --mode vector"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), append(append([]string{}, base...), tt.args...), &out, &errOut)
		if want := "mnemo query: " + tt.want + "\nUsage: mnemo query"; code != 2 || !strings.HasPrefix(errOut.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut.String(), want)
		}
	}
}

// TestQueryErrors checks the errors of queries that parse but cannot run
// against the collection: exit 1, one line, no hits.
func TestQueryErrors(t *testing.T) {
	dir := importNotes(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--vector", "[1, 0]"}, "dimension mismatch"},
		{[]string{"--vector", "null"}, "--vector: want a JSON array of numbers, got null"},
		{[]string{"--text", "a", "--filter", `{"$bad": 1}`}, "--filter: mnemo: bad filter"},
		{[]string{"--queries", "no-such-file.jsonl"}, "no-such-file.jsonl"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), append([]string{"query", "--db", dir, "--collection", "notes"}, tt.args...), &out, &errOut)
		if code != 1 || out.Len() > 0 || !strings.HasPrefix(errOut.String(), "mnemo query: ") || !strings.Contains(errOut.String(), tt.want) || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", tt.args, code, out.String(), errOut.String(), tt.want)
		}
	}
	// A text the embedder finds nothing in: an error in vector mode; in the
	// default mode it is matched by its words alone, which it has none of.
	if !embed.IsZero(defaultHashing(t).Vector("?!")) {
		t.Log(`the hashing embedder embeds "?!": no text to test the zero vector with`)
		return
	}
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--text", "?!", "--mode", "vector"}, &out, &errOut); code != 1 ||
		errOut.String() != "mnemo query: text \"?!\": the text embeds to the zero vector (nothing in it to embed)\n" {
		t.Errorf("--text \"?!\" --mode vector: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(t.Context(), []string{"query", "--db", dir, "--collection", "notes", "--text", "?!", "--json"}, &out, &errOut); code != 0 || out.String() != "{\"hits\":[]}\n" {
		t.Errorf("--text \"?!\": exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// TestQuerySpread: in text and hybrid mode query spreads by default as
// the memory adapters do (mnemo.DefaultSpread over the place import
// stores), --spread and --spread-window tune it, --spread 0 and vector
// mode do without; a hit shows its place as "group" and "position".
func TestQuerySpread(t *testing.T) {
	var in strings.Builder
	turns := []string{"What is your favourite fruit?", "Mangoes, without a doubt.", "And in winter?", "Oranges from the market.", "Anything else?"}
	for i, s := range turns {
		js, _ := json.Marshal(map[string]any{"id": fmt.Sprint("t", i), "content": s, "group": "chat", "position": i, "metadata": map[string]any{"source": "chat"}})
		in.Write(append(js, '\n'))
	}
	dir := filepath.Join(t.TempDir(), "db")
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"import", "--db", dir, "--collection", "notes", "--embedder", "hashing", "--file", writeTemp(t, in.String())}, &out, &errOut); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errOut.String())
	}
	const text = "favourite fruit"
	tests := []struct {
		name  string
		flags []string
		q     mnemo.Query
	}{
		{"default", nil, mnemo.Query{Mode: mnemo.ModeHybrid, Spread: mnemo.DefaultSpread()}},
		{"text", []string{"--mode", "text"}, mnemo.Query{Mode: mnemo.ModeText, Spread: mnemo.DefaultSpread()}},
		{"tuned", []string{"--spread", "0.2", "--spread-window", "1"},
			mnemo.Query{Mode: mnemo.ModeHybrid, Spread: &mnemo.Spread{Group: mnemo.GroupField, Position: mnemo.PositionField, Weight: 0.2, Window: 1}}},
		{"off", []string{"--spread", "0"}, mnemo.Query{Mode: mnemo.ModeHybrid}},
		{"text off", []string{"--mode", "text", "--spread", "0"}, mnemo.Query{Mode: mnemo.ModeText}},
		{"vector", []string{"--mode", "vector"}, mnemo.Query{Mode: mnemo.ModeVector}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"query", "--db", dir, "--collection", "notes", "--text", text, "--json"}, tt.flags...)
			var out, errOut bytes.Buffer
			if code := run(t.Context(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			got := decodeAnswer(t, out.String()).Hits
			q := tt.q
			q.Text = text
			sameHits(t, got, engineAnswer(t, dir, q), tt.q.Mode != mnemo.ModeText)
			ids := map[string]bool{}
			for _, h := range got {
				ids[h.ID] = true
				if h.Group == nil || *h.Group != "chat" || h.Position == nil || fmt.Sprint("t", *h.Position) != h.ID {
					t.Errorf("hit %s: group %v, position %v; want chat and its turn", h.ID, h.Group, h.Position)
				}
				if _, ok := h.Metadata[mnemo.GroupField]; ok {
					t.Errorf("hit %s: the place is in the metadata too: %v", h.ID, h.Metadata)
				}
			}
			// Only spreading finds the answer, the turn after the match,
			// in text mode.
			if lifted := tt.q.Spread != nil; tt.q.Mode == mnemo.ModeText && ids["t1"] != lifted {
				t.Errorf("hits %v: the answer t1 found %v, want %v", ids, ids["t1"], lifted)
			}
		})
	}
}

// TestQuerySpreadUsage checks the spreading flags' usage errors.
func TestQuerySpreadUsage(t *testing.T) {
	base := []string{"query", "--db", "x", "--collection", "c", "--text", "a"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--spread", "1.5"}, "--spread 1.5, want a number in [0, 1]"},
		{[]string{"--spread", "-0.1"}, "--spread -0.1, want a number in [0, 1]"},
		{[]string{"--spread", "NaN"}, "--spread NaN, want a number in [0, 1]"},
		{[]string{"--spread-window", "0"}, "--spread-window 0, want 1 to 16"},
		{[]string{"--spread-window", "17"}, "--spread-window 17, want 1 to 16"},
		{[]string{"--spread", "0", "--spread-window", "3"}, "--spread-window goes with spreading, which --spread 0 turns off"},
		{[]string{"--mode", "vector", "--spread", "0.5"}, "--spread and --spread-window tune text and hybrid queries, not --mode vector"},
		{[]string{"--mode", "vector", "--spread-window", "1"}, "--spread and --spread-window tune text and hybrid queries, not --mode vector"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(t.Context(), append(append([]string{}, base...), tt.args...), &out, &errOut)
		if want := "mnemo query: " + tt.want + "\nUsage: mnemo query"; code != 2 || !strings.HasPrefix(errOut.String(), want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut.String(), want)
		}
	}
}
