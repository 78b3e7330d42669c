package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var ctx = context.Background()

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d // unit vectors
}

func TestHashingProperties(t *testing.T) {
	h, err := NewHashing(0)
	if err != nil {
		t.Fatal(err)
	}
	if h.Dimension() != 1024 || h.Identity() != "hashing/v2/1024" {
		t.Fatalf("dimension %d, identity %q", h.Dimension(), h.Identity())
	}
	vs, _ := h.Embed(ctx, []string{"Paul works at Google", "Paul works at Google", "", " \t\n", "!!! ...", "日本語のテキスト"})
	if fmt.Sprint(vs[0]) != fmt.Sprint(vs[1]) {
		t.Fatal("not deterministic")
	}
	for i, v := range vs {
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("text %d: non-finite component", i)
			}
			n += float64(x) * float64(x)
		}
		zero := i == 2 || i == 3 // only empty and whitespace-only text
		if (zero && n != 0) || (!zero && math.Abs(n-1) > 1e-5) {
			t.Fatalf("text %d: squared norm %v", i, n)
		}
	}
	if _, err := NewHashing(8); !errors.Is(err, ErrConfig) {
		t.Fatalf("dimension 8: %v", err)
	}
}

// TestHashingBitExact: the same text embeds to the same bits every time,
// for both versions (colliding features once added up in map order).
func TestHashingBitExact(t *testing.T) {
	text := "Caroline went to the LGBTQ support group, and the group was so supportive of her: she felt at home."
	for _, mk := range []func(int) (*Hashing, error){NewHashing, NewHashingV1} {
		h, _ := mk(64) // few buckets: many collisions
		first := h.Vector(text)
		for range 100 {
			v := h.Vector(text)
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%s: component %d differs across runs", h.Identity(), i)
				}
			}
		}
	}
}

func TestOffline(t *testing.T) {
	for _, id := range []string{"hashing/v2/1024", "hashing/v1/384", "hashing/v2/16"} {
		h, ok := Offline(id)
		if !ok || h.Identity() != id {
			t.Errorf("Offline(%q) = %v, %v", id, h, ok)
		}
	}
	for _, id := range []string{"", "hashing/v3/384", "hashing/v1/8", "hashing/v2/0384", "openai/text-embedding-3-small/1536", "hashing/v2/384x"} {
		if h, ok := Offline(id); ok {
			t.Errorf("Offline(%q) = %v", id, h.Identity())
		}
	}
	v1, _ := NewHashingV1(0)
	if v1.Identity() != "hashing/v1/384" {
		t.Fatalf("v1 default %q", v1.Identity())
	}
}

func TestHashingRanksByMeaningfulOverlap(t *testing.T) {
	h, _ := NewHashing(0)
	q := h.Vector("work")
	facts := []string{"Paul works at Google", "Paul is married to Sarah", "Sarah is the sister of Emma"}
	var best int
	for i, f := range facts {
		if cos(q, h.Vector(f)) > cos(q, h.Vector(facts[best])) {
			best = i
		}
	}
	if best != 0 {
		t.Fatalf("'work' is nearest to %q", facts[best])
	}
	// Inflections meet: "working" and "worked" share the stem.
	if cos(h.Vector("she was working late"), h.Vector("he worked late")) < 0.3 {
		t.Fatal("inflected forms barely overlap")
	}
	// Stop words are dropped: sharing only "the" and "of" counts for
	// nothing but n-gram collisions.
	if c := cos(h.Vector("the history of the roman empire"), h.Vector("the price of the tickets")); c > 0.1 {
		t.Fatalf("stop-word overlap scores %v", c)
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"works": "work", "working": "work", "worked": "work", "stories": "story", "boxes": "box",
		"running": "run", "falling": "fall", "passed": "pass", "class": "class", "notes": "note",
		"quickly": "quick", "bus": "bus", "is": "is", "google": "google", "naïve": "naïve",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeServer answers embedding requests; fail decides, per request number,
// a status and body to send instead.
func fakeServer(t *testing.T, dim int, fail func(n int64) (int, string, string)) (*httptest.Server, *atomic.Int64, *[]int) {
	var n atomic.Int64
	var batches []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		if fail != nil {
			if status, body, retry := fail(k); status != 0 {
				if retry != "" {
					w.Header().Set("Retry-After", retry)
				}
				w.WriteHeader(status)
				w.Write([]byte(body))
				return
			}
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("bad request: %v", err)
		}
		batches = append(batches, len(req.Input))
		vec := func(s string) []float32 {
			v := make([]float32, dim)
			v[len(s)%dim] = 1
			return v
		}
		switch r.URL.Path {
		case "/v1/embeddings":
			if r.Header.Get("Authorization") != "Bearer sk-test" {
				w.WriteHeader(401)
				w.Write([]byte(`{"error": {"message": "Incorrect API key provided"}}`))
				return
			}
			type item struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var data []item
			for i := len(req.Input) - 1; i >= 0; i-- { // out of order on purpose
				data = append(data, item{i, vec(req.Input[i])})
			}
			json.NewEncoder(w).Encode(map[string]any{"data": data})
		case "/api/embed":
			var embs [][]float32
			for _, s := range req.Input {
				embs = append(embs, vec(s))
			}
			json.NewEncoder(w).Encode(map[string]any{"embeddings": embs})
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n, &batches
}

func newClients(t *testing.T, url string, dim int, mod func(*HTTPOptions)) []Embedder {
	o := HTTPOptions{BaseURL: url, Model: "m", Dimension: dim, BatchSize: 2, Backoff: time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	oa := o
	oa.BaseURL = url + "/v1"
	a, err := NewOpenAI(OpenAIOptions{HTTPOptions: oa, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewOllama(o)
	if err != nil {
		t.Fatal(err)
	}
	return []Embedder{a, b}
}

func TestHTTPEmbedders(t *testing.T) {
	srv, _, batches := fakeServer(t, 8, nil)
	for _, e := range newClients(t, srv.URL, 8, nil) {
		t.Run(e.Identity(), func(t *testing.T) {
			*batches = nil
			texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
			vs, err := e.Embed(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vs {
				if v[len(texts[i])%8] != 1 {
					t.Fatalf("text %d got the wrong vector %v", i, v)
				}
			}
			if fmt.Sprint(*batches) != "[2 2 1]" {
				t.Fatalf("batches %v, want [2 2 1]", *batches)
			}
			if !strings.HasSuffix(e.Identity(), "/m/8") {
				t.Fatalf("identity %q", e.Identity())
			}
		})
	}
}

func TestHTTPRetriesAndErrors(t *testing.T) {
	tests := []struct {
		name string
		fail func(n int64) (int, string, string)
		dim  int
		want error
	}{
		{"429 then ok", func(n int64) (int, string, string) {
			if n == 1 {
				return 429, `{"error": {"message": "slow down"}}`, "0"
			}
			return 0, "", ""
		}, 8, nil},
		{"503 twice then ok", func(n int64) (int, string, string) {
			if n <= 2 {
				return 503, "overloaded", ""
			}
			return 0, "", ""
		}, 8, nil},
		{"always 500", func(int64) (int, string, string) { return 500, "boom", "" }, 8, ErrUnavailable},
		{"400 with message", func(int64) (int, string, string) {
			return 400, `{"error": {"message": "input too long"}, "error_ollama": 1}`, ""
		}, 8, ErrRequest},
		{"wrong dimension", nil, 4, ErrResponse},
		{"garbage", func(int64) (int, string, string) { return 200, "not json", "" }, 8, ErrResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _, _ := fakeServer(t, 8, tt.fail)
			for _, e := range newClients(t, srv.URL, tt.dim, func(o *HTTPOptions) { o.MaxRetries = 3 }) {
				_, err := e.Embed(ctx, []string{"x", "yy"})
				if !errors.Is(err, tt.want) && !(tt.want == nil && err == nil) {
					t.Fatalf("%s: err = %v, want %v", e.Identity(), err, tt.want)
				}
				if tt.name == "400 with message" && e.Identity()[:6] == "openai" && !strings.Contains(err.Error(), "input too long") {
					t.Fatalf("the server's message is missing: %v", err)
				}
			}
		})
	}
}

func TestHTTPAuthAndContext(t *testing.T) {
	srv, _, _ := fakeServer(t, 8, nil)
	bad, _ := NewOpenAI(OpenAIOptions{HTTPOptions: HTTPOptions{BaseURL: srv.URL + "/v1", Model: "m", Dimension: 8}, APIKey: "wrong"})
	if _, err := bad.Embed(ctx, []string{"x"}); !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("wrong key: %v", err)
	}
	t.Setenv("OPENAI_API_KEY", "")
	if _, err := NewOpenAI(OpenAIOptions{HTTPOptions: HTTPOptions{Model: "m", Dimension: 8}}); !errors.Is(err, ErrConfig) {
		t.Fatalf("no key: %v", err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test")
	env, err := NewOpenAI(OpenAIOptions{HTTPOptions: HTTPOptions{BaseURL: srv.URL + "/v1", Model: "m", Dimension: 8}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Embed(ctx, []string{"x"}); err != nil {
		t.Fatalf("key from the environment: %v", err)
	}
	if _, err := NewOllama(HTTPOptions{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("no model or dimension: %v", err)
	}
	// A deadline cuts the retry wait short.
	slow, _, _ := fakeServer(t, 8, func(int64) (int, string, string) { return 503, "busy", "30" })
	e := newClients(t, slow.URL, 8, nil)[1]
	c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := e.Embed(c, []string{"x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the deadline did not interrupt the Retry-After wait")
	}
}

func BenchmarkHashing(b *testing.B) {
	for _, mk := range []func(int) (*Hashing, error){NewHashing, NewHashingV1} {
		h, _ := mk(0)
		b.Run(h.Identity(), func(b *testing.B) { benchmarkHashing(b, h) })
	}
}

func benchmarkHashing(b *testing.B, h *Hashing) {
	sentences := []string{
		"Paul works at Google as a software engineer",
		"The user prefers dark mode and short answers",
		"Remember to call the dentist on Tuesday morning",
		"Sarah is the sister of Emma and lives in Paris",
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.Vector(sentences[i%len(sentences)])
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sentences/s")
}

// FuzzHashing: the embedder never panics, and its vectors are finite and
// of unit norm, or zero for text without letters or digits.
func FuzzHashing(f *testing.F) {
	f.Add("Paul works at Google")
	f.Add("")
	f.Add("\xff\xfe日本 ßtraße 123")
	h, _ := NewHashing(64)
	f.Fuzz(func(t *testing.T, s string) {
		v := h.Vector(s)
		var n float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatal("non-finite component")
			}
			n += float64(x) * float64(x)
		}
		if n != 0 && math.Abs(n-1) > 1e-4 {
			t.Fatalf("squared norm %v", n)
		}
		if n == 0 && len(tokenize(s)) > 0 {
			// Possible only if every feature cancelled out, which signed
			// hashing makes vanishingly rare; report it.
			t.Fatalf("zero vector for %q with words %v", s, tokenize(s))
		}
	})
}

func TestTokenize(t *testing.T) {
	for in, want := range map[string]string{
		"What's Paul’s car?":   "[what paul car]",
		"don't-stop  ME now":   "[don stop me now]",
		"naïve café, 42 items": "[naïve café 42 item]",
		"日本語 text":             "[日本語 text]",
		"":                     "[]",
		"...":                  "[]",
	} {
		if got := fmt.Sprint(tokenize(in)); got != want {
			t.Errorf("tokenize(%q) = %s, want %s", in, got, want)
		}
	}
}
