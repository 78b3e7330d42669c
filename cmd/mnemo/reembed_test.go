package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeOllama serves POST /api/embed with vectors of dim values made from
// each text's words, so that texts sharing a word are near.
func fakeOllama(t *testing.T, dim int) (*httptest.Server, *atomic.Int64) {
	var texts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "tiny" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		texts.Add(int64(len(req.Input)))
		out := make([][]float32, len(req.Input))
		for i, s := range req.Input {
			v := make([]float32, dim)
			v[0] = 0.01
			for _, word := range strings.Fields(strings.ToLower(s)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(word, ".,?!")))
				v[h.Sum32()%uint32(dim)]++
			}
			out[i] = v
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
	}))
	t.Cleanup(srv.Close)
	return srv, &texts
}

func runMnemo(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestReembedCommand imports facts with the offline embedder, moves the
// collection to a model server's embedder with mnemo reembed, and
// queries it by text through that server; a second run has nothing to do.
func TestReembedCommand(t *testing.T) {
	srv, texts := fakeOllama(t, 256)
	t.Setenv("OLLAMA_HOST", srv.URL)
	dir := t.TempDir() + "/db"
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf(`{"id":"f%02d","content":"fact %d about topic%d"}`, i, i, i%7))
	}
	lines = append(lines, `{"id":"pasta","content":"the user likes pappardelle"}`)
	data := writeTemp(t, strings.Join(lines, "\n"))
	if _, e, code := runMnemo(t, "import", "--db", dir, "--collection", "facts", "--embedder", "hashing", "--file", data); code != 0 {
		t.Fatalf("import: %d %s", code, e)
	}
	out, e, code := runMnemo(t, "reembed", "--db", dir, "--collection", "facts", "--embedder", "ollama", "--model", "tiny", "--dim", "256", "--batch", "7")
	if code != 0 {
		t.Fatalf("reembed: exit %d: %s", code, e)
	}
	if want := `collection "facts" re-embedded with ollama/tiny/256: 51 records, 51 embedded in 3 passes`; strings.TrimSpace(out) != want {
		t.Fatalf("reembed said %q, want %q", out, want)
	}
	if texts.Load() != 51 {
		t.Fatalf("the server embedded %d texts, want 51", texts.Load())
	}
	out, e, code = runMnemo(t, "query", "--db", dir, "--collection", "facts", "--text", "pappardelle", "--mode", "vector", "--k", "1")
	if code != 0 || !strings.Contains(out, "pasta") {
		t.Fatalf("query through the new embedder: exit %d, %q, %s", code, out, e)
	}
	out, _, code = runMnemo(t, "reembed", "--db", dir, "--collection", "facts", "--embedder", "ollama", "--model", "tiny", "--dim", "256")
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("a second run: exit %d, %q", code, out)
	}
	// import embeds with the collection's model server too.
	more := writeTemp(t, `{"id":"new","content":"the user likes rigatoni"}`)
	if _, e, code := runMnemo(t, "import", "--db", dir, "--collection", "facts", "--file", more); code != 0 {
		t.Fatalf("import into the re-embedded collection: %d %s", code, e)
	}
	if out, e, _ := runMnemo(t, "query", "--db", dir, "--collection", "facts", "--text", "likes rigatoni", "--mode", "vector", "--k", "3"); !strings.Contains(out, "new") {
		g, _, _ := runMnemo(t, "get", "--db", dir, "--collection", "facts", "new")
		t.Fatalf("the imported line was not embedded by the server: %q %s; get: %s", out, e, g)
	}
	for _, bad := range [][]string{
		{"--embedder", "ollama", "--model", "tiny"},
		{"--embedder", "word2vec"},
		{"--embedder", "hashing", "--dim", "7"},
		{},
	} {
		args := append([]string{"reembed", "--db", dir, "--collection", "facts"}, bad...)
		if _, e, code := runMnemo(t, args...); code != 2 {
			t.Errorf("%q: exit %d (%s), want 2", bad, code, e)
		}
	}
	if _, e, code := runMnemo(t, "reembed", "--db", dir, "--collection", "none", "--embedder", "hashing"); code != 1 || !strings.Contains(e, "none") {
		t.Errorf("an absent collection: exit %d, %s", code, e)
	}
}

func TestParseHTTPIdentity(t *testing.T) {
	for _, c := range []struct {
		id          string
		name, model string
		dim         int
		ok          bool
	}{
		{"openai/text-embedding-3-small/1536", "openai", "text-embedding-3-small", 1536, true},
		{"ollama/nomic-ai/nomic-embed-text/768", "ollama", "nomic-ai/nomic-embed-text", 768, true},
		{"hashing/v2/384", "", "", 0, false},
		{"openai/x/0", "", "", 0, false},
		{"openai/1536", "", "", 0, false},
		{"openai//12", "", "", 0, false},
	} {
		name, model, dim, ok := parseHTTPIdentity(c.id)
		if name != c.name || model != c.model || dim != c.dim || ok != c.ok {
			t.Errorf("parseHTTPIdentity(%q) = %q %q %d %v", c.id, name, model, dim, ok)
		}
	}
}
