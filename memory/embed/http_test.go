package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// setMaxBody lowers an HTTP embedder's response size limit.
func setMaxBody(e Embedder, n int64) {
	switch c := e.(type) {
	case *OpenAI:
		c.e.maxBody = n
	case *Ollama:
		c.e.maxBody = n
	}
}

// paddedServer answers every request with a valid response for two texts,
// led by spaces to exactly size bytes, so that a prefix of it is not
// valid JSON.
func paddedServer(t *testing.T, size int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := `{"embeddings": [[1, 0], [0, 1]]}`
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			body = `{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`
		}
		if len(body) > size {
			t.Errorf("the response needs %d bytes", len(body))
		}
		fmt.Fprint(w, strings.Repeat(" ", size-len(body))+body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPResponseSizeLimit(t *testing.T) {
	const limit = 1024
	tests := []struct {
		name string
		size int
		want error
	}{
		{"at the limit", limit, nil},
		{"one byte over", limit + 1, ErrResponse},
		{"far over", 64 * limit, ErrResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := paddedServer(t, tt.size)
			for _, e := range newClients(t, srv.URL, 2, func(o *HTTPOptions) { o.MaxRetries = -1 }) {
				setMaxBody(e, limit)
				_, err := e.Embed(ctx, []string{"x", "y"})
				if tt.want == nil {
					if err != nil {
						t.Errorf("%s: %v", e.Identity(), err)
					}
					continue
				}
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), "limit") || !strings.Contains(err.Error(), "1024") {
					t.Errorf("%s: err = %v, want %v naming the 1024-byte limit", e.Identity(), err, tt.want)
				}
				if err != nil && strings.Contains(err.Error(), "JSON") {
					t.Errorf("%s: an oversized response reported as bad JSON: %v", e.Identity(), err)
				}
			}
		})
	}
}

// cutServer answers every request with the given raw HTTP head and body,
// then closes the connection.
func cutServer(t *testing.T, head, body string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		buf.WriteString(head + "\r\n" + body)
		buf.Flush()
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPTruncatedResponse(t *testing.T) {
	const part = `{"embeddings": [[1, 0], [0`
	tests := []struct {
		name, head, body string
	}{
		{"Content-Length promises more", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\nConnection: close\r\n", part},
		{"chunked, cut inside a chunk", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n", "1f4\r\n" + part},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := cutServer(t, tt.head, tt.body)
			for _, e := range newClients(t, srv.URL, 2, func(o *HTTPOptions) { o.MaxRetries = -1 }) {
				_, err := e.Embed(ctx, []string{"x", "y"})
				if err == nil || !strings.Contains(err.Error(), "truncated") || strings.Contains(err.Error(), "limit") {
					t.Errorf("%s: err = %v, want one saying the response was truncated", e.Identity(), err)
				}
			}
		})
	}
}

// countingTransport counts the bytes the client reads from response
// bodies.
type countingTransport struct{ read atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{resp.Body, &c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// streamServer answers with head, then unit repeated (without a
// Content-Length) until size bytes or the client hangs up, then tail.
func streamServer(t *testing.T, head, unit, tail string, size int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		chunk := []byte(strings.Repeat(unit, 64<<10/len(unit)))
		if _, err := io.WriteString(w, head); err != nil {
			return
		}
		for n := len(head); n+len(chunk) <= size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the client stopped reading
			}
		}
		io.WriteString(w, tail)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHTTPResponseHeldUnderLimit: a huge response is read through the
// size limit and decoded as it streams in, so the client reads no more
// than the limit and holds far less: not the body, and not the vectors
// beyond those the request asked for. (Reading the whole body first
// allocated more than twice the limit.)
func TestHTTPResponseHeldUnderLimit(t *testing.T) {
	const limit = 16 << 20
	tests := []struct {
		name          string
		openai, llama [3]string // head, unit, tail
		size          int
		want          string
	}{
		{"vectors past the limit",
			[3]string{`{"data": [`, `{"index": 0, "embedding": [0.25, 0.5]}, `, `{"index": 1, "embedding": [1, 0]}]}`},
			[3]string{`{"embeddings": [`, `[0.25, 0.5], `, `[1, 0]]}`},
			8 * limit, "limit"},
		{"spaces past the limit",
			[3]string{`{"data": [`, ` `, `]}`},
			[3]string{`{"embeddings": [`, ` `, `]}`},
			8 * limit, "limit"},
		{"too many vectors under the limit",
			[3]string{`{"data": [`, `{"index": 0, "embedding": [0.25, 0.5]}, `, `{"index": 1, "embedding": [1, 0]}]}`},
			[3]string{`{"embeddings": [`, `[0.25, 0.5], `, `[1, 0]]}`},
			limit - 1<<20, "vectors for 2 texts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, parts := range [][3]string{tt.openai, tt.llama} {
				srv := streamServer(t, parts[0], parts[1], parts[2], tt.size)
				tr := &countingTransport{}
				e := newClients(t, srv.URL, 2, func(o *HTTPOptions) {
					o.MaxRetries = -1
					o.Client = &http.Client{Transport: tr}
				})[i]
				setMaxBody(e, limit)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := e.Embed(ctx, []string{"x", "y"})
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("%s: err = %v, want ErrResponse saying %q", e.Identity(), err, tt.want)
				}
				if read := tr.read.Load(); read > limit+1 {
					t.Errorf("%s: read %d bytes of the response, over the limit of %d", e.Identity(), read, limit)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit/8 && !raceEnabled {
					t.Errorf("%s: allocated %d bytes reading the response (limit %d)", e.Identity(), alloc, limit)
				}
			}
		})
	}
}

// TestHTTPResponseJSON: the streaming decoder reads what encoding/json
// reads into the response types, and refuses what it refuses.
func TestHTTPResponseJSON(t *testing.T) {
	tests := []struct {
		name, openai, ollama string
		ok                   bool
	}{
		{"plain", `{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [[1, 0], [0, 1]]}`, true},
		{"other fields, escapes, whitespace", "\t{\"object\": \"list\", \"model\": \"m\\u00e9\\\"\", \"usage\": {\"n\": [1, 2.5e3, true, false, null, {}]},\r\n \"d\\u0061ta\": [{\"embedding\": [1e0, 0.0e5], \"object\": \"embedding\", \"index\": 0},\n{\"index\": 1, \"embedding\": [0, 1E+0]}]}\n",
			"{\"model\": \"m\", \"total_duration\": 12, \"Embeddings\" : [ [ 1 , 0 ] , [0,1] ], \"x\": [[[]]]}  ", true},
		{"null element", `{"data": [{"index": 0, "embedding": [1, null]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [[1, null], [0, 1]]}`, true},
		{"later key wins", `{"data": [], "data": [{"index": 1, "embedding": [0, 1]}, {"index": 0, "embedding": [1, 0]}]}`,
			`{"embeddings": [[9]], "embeddings": [[1, 0], [0, 1]]}`, true},
		{"trailing garbage", `{"data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]} x`,
			`{"embeddings": [[1, 0], [0, 1]]}]`, false},
		{"bad number", `{"data": [{"index": 0, "embedding": [01, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [[1., 0], [0, 1]]}`, false},
		{"float32 overflow", `{"data": [{"index": 0, "embedding": [1e39, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [[1e39, 0], [0, 1]]}`, false},
		{"string for a number", `{"data": [{"index": "0", "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [["1", 0], [0, 1]]}`, false},
		{"index not an integer", `{"data": [{"index": 0.5, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [[1, 0], [0, 1]`, false},
		{"index twice", `{"data": [{"index": 1, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"embeddings": [[1, 0], [0, 1]], "x": tru}`, false},
		{"bad escape in a skipped string", `{"x": "\q", "data": [{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]}`,
			`{"x": "a` + "\x01" + `", "embeddings": [[1, 0], [0, 1]]}`, false},
		{"not an object", `[{"index": 0, "embedding": [1, 0]}, {"index": 1, "embedding": [0, 1]}]`,
			`[[1, 0], [0, 1]]`, false},
		{"empty", ``, ` `, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/embeddings") {
					io.WriteString(w, tt.openai)
				} else {
					io.WriteString(w, tt.ollama)
				}
			}))
			defer srv.Close()
			for _, e := range newClients(t, srv.URL, 2, func(o *HTTPOptions) { o.MaxRetries = -1 }) {
				vs, err := e.Embed(ctx, []string{"x", "y"})
				if !tt.ok {
					if !errors.Is(err, ErrResponse) {
						t.Errorf("%s: %v, %v; want ErrResponse", e.Identity(), vs, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", e.Identity(), err)
					continue
				}
				if fmt.Sprint(vs) != "[[1 0] [0 1]]" {
					t.Errorf("%s: %v, want [[1 0] [0 1]]", e.Identity(), vs)
				}
			}
		})
	}
}

// FuzzResponseJSON: the streaming decoder reads a response body as
// encoding/json reads it into the response types: the same vectors, or
// an error for the same bodies. (Bodies are at most maxJSONToken bytes:
// longer numbers are the one thing it refuses that encoding/json reads.)
func FuzzResponseJSON(f *testing.F) {
	for _, s := range []string{
		`{"data": [{"index": 1, "embedding": [1, 0.5]}, {"index": 0, "embedding": [-2e-3, 1E+2]}]}`,
		`{"embeddings": [[1, 0], [0, 1]], "model": "m\u00e9"}`,
		`{"DATA": null, "Embeddings": [null, [null, 1]], "x": {"y": [true, false, null, "\"\\"]}}`,
		` {"data": [null, {"index": -0, "embedding": []}]} `,
		`{"data": [{"index": 1.5}]}`, `{"embeddings": [[1e39]]}`, `[]`, `null`, `{"a": 1}x`, `{"embedding\u0073": [[1]]}`,
	} {
		f.Add(s)
	}
	oa, err := NewOpenAI(OpenAIOptions{HTTPOptions: HTTPOptions{Model: "m", Dimension: 1}, AllowNoKey: true})
	if err != nil {
		f.Fatal(err)
	}
	ol, err := NewOllama(HTTPOptions{Model: "m", Dimension: 1})
	if err != nil {
		f.Fatal(err)
	}
	const want, dim = 8, 4 // what the decoder keeps: it counts the rest
	stream := func(e *httpEmbedder, body string) (string, error) {
		v := vectors{want: want, dim: dim}
		s := newJSONStream(strings.NewReader(body))
		err := s.value(func() error { return e.decode(s, &v) })
		if err == nil {
			err = s.end()
		}
		return fmt.Sprint(v.n, v.items), err
	}
	kept := func(items []vectorItem) string {
		n := len(items)
		items = items[:min(n, want)]
		for i := range items {
			items[i].vec = items[i].vec[:min(len(items[i].vec), dim)]
		}
		return fmt.Sprint(n, items)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if len(body) > maxJSONToken {
			return
		}
		var r1 struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		err1 := json.Unmarshal([]byte(body), &r1)
		var want1 []vectorItem
		for _, d := range r1.Data {
			want1 = append(want1, vectorItem{d.Index, d.Embedding, len(d.Embedding)})
		}
		got, err := stream(&oa.e, body)
		if (err == nil) != (err1 == nil) || err == nil && got != kept(want1) {
			t.Errorf("openai %q: %s, %v; encoding/json %v, %v", body, got, err, want1, err1)
		}
		var r2 struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		err2 := json.Unmarshal([]byte(body), &r2)
		var want2 []vectorItem
		for i, e := range r2.Embeddings {
			want2 = append(want2, vectorItem{i, e, len(e)})
		}
		got, err = stream(&ol.e, body)
		if (err == nil) != (err2 == nil) || err == nil && got != kept(want2) {
			t.Errorf("ollama %q: %s, %v; encoding/json %v, %v", body, got, err, want2, err2)
		}
	})
}
