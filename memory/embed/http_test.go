package embed

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
