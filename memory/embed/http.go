package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTPOptions are the settings the HTTP embedders share. Zero fields mean
// their defaults.
type HTTPOptions struct {
	// BaseURL of the API, e.g. "https://api.openai.com/v1" or
	// "http://localhost:11434".
	BaseURL string
	// Model name. Required.
	Model string
	// Dimension the model returns. Required: it is part of the identity,
	// and every response is checked against it.
	Dimension int
	// BatchSize is the most texts per request. Default 128.
	BatchSize int
	// MaxRetries after a 429 or 5xx answer or a network error. Default 4;
	// negative disables retries.
	MaxRetries int
	// Backoff before the first retry, doubled each time (up to 30 s) unless
	// the server sends Retry-After. Default 500 ms.
	Backoff time.Duration
	// Client to send requests with. Default: a client without a timeout
	// (the context's deadline applies).
	Client *http.Client
}

func (o HTTPOptions) withDefaults(baseURL string) (HTTPOptions, error) {
	if o.BaseURL == "" {
		o.BaseURL = baseURL
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.BatchSize == 0 {
		o.BatchSize = 128
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 4
	}
	if o.Backoff == 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	var errs []error
	if o.Model == "" {
		errs = append(errs, fmt.Errorf("%w: no model", ErrConfig))
	}
	if o.Dimension <= 0 {
		errs = append(errs, fmt.Errorf("%w: dimension %d, want the model's (> 0)", ErrConfig, o.Dimension))
	}
	if o.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("%w: batch size %d", ErrConfig, o.BatchSize))
	}
	return o, errors.Join(errs...)
}

// MaxResponseBytes is the most bytes of a response body the HTTP
// embedders read; a longer response is an error (ErrResponse). It is far
// more than a batch of 128 embeddings of any current model needs.
const MaxResponseBytes = 256 << 20

// httpEmbedder is the request loop shared by the OpenAI and Ollama clients:
// batching, retries and response checks. Each client supplies how to build
// a request body, decode a response and read an error message.
type httpEmbedder struct {
	opts     HTTPOptions
	maxBody  int64 // the response size limit; 0 means MaxResponseBytes
	path     string
	name     string
	header   http.Header
	body     func(model string, batch []string) any
	decode   func(data []byte) ([][]float32, error)
	errorMsg func(data []byte) string
}

func (e *httpEmbedder) identity() string {
	return fmt.Sprintf("%s/%s/%d", e.name, e.opts.Model, e.opts.Dimension)
}

func (e *httpEmbedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += e.opts.BatchSize {
		batch := texts[lo:min(lo+e.opts.BatchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *httpEmbedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	payload, err := json.Marshal(e.body(e.opts.Model, batch))
	if err != nil {
		return nil, fmt.Errorf("embed: encode request: %w", err)
	}
	url := e.opts.BaseURL + e.path
	wait := e.opts.Backoff
	for attempt := 0; ; attempt++ {
		data, status, retryAfter, err := e.post(ctx, url, payload)
		var retryable error
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("embed: %s: %w", e.name, ctx.Err())
		case errors.Is(err, ErrResponse): // over the size limit: asking again would not help
			return nil, err
		case err != nil:
			retryable = err
		case status == http.StatusTooManyRequests || status >= 500:
			retryable = fmt.Errorf("HTTP %d: %s", status, e.message(data))
		case status >= 400:
			return nil, fmt.Errorf("%w: %s %s: HTTP %d: %s", ErrRequest, e.name, e.opts.Model, status, e.message(data))
		case status != http.StatusOK:
			return nil, fmt.Errorf("%w: %s: unexpected HTTP %d", ErrResponse, e.name, status)
		default:
			return e.check(data, len(batch))
		}
		if attempt >= e.opts.MaxRetries {
			return nil, fmt.Errorf("%w: %s after %d attempts: %v", ErrUnavailable, e.name, attempt+1, retryable)
		}
		delay := wait
		if retryAfter > 0 {
			delay = retryAfter
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("embed: %s: %w (while waiting to retry: %v)", e.name, ctx.Err(), retryable)
		case <-time.After(delay):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// post sends one request and returns the body, status and Retry-After.
// A body over the size limit is ErrResponse; one that ends before it is
// complete (shorter than its Content-Length, or cut off) is an error
// saying it was truncated, which the caller retries like a network error.
func (e *httpEmbedder) post(ctx context.Context, url string, payload []byte) ([]byte, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range e.header {
		req.Header[k] = vs
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, 0, 0, err
	}
	defer resp.Body.Close()
	limit := e.maxBody
	if limit == 0 {
		limit = MaxResponseBytes
	}
	if resp.ContentLength > limit {
		return nil, 0, 0, fmt.Errorf("%w: %s: response is %d bytes, over the limit of %d bytes", ErrResponse, e.name, resp.ContentLength, limit)
	}
	// One byte more than the limit tells a response over it from one that
	// fits exactly.
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if resp.ContentLength >= 0 {
			return nil, 0, 0, fmt.Errorf("response truncated after %d of %d bytes: %v", len(data), resp.ContentLength, err)
		}
		return nil, 0, 0, fmt.Errorf("response truncated after %d bytes: %v", len(data), err)
	}
	if int64(len(data)) > limit {
		return nil, 0, 0, fmt.Errorf("%w: %s: response is over the limit of %d bytes", ErrResponse, e.name, limit)
	}
	return data, resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), nil
}

// retryAfter parses a Retry-After header (seconds or an HTTP date); zero
// when absent or unparseable. It is capped at one minute.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	}
	return max(0, min(d, time.Minute))
}

// message extracts the server's error message, or a prefix of the body.
func (e *httpEmbedder) message(data []byte) string {
	if m := e.errorMsg(data); m != "" {
		return m
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// check decodes a response and verifies its count, dimension and values.
func (e *httpEmbedder) check(data []byte, want int) ([][]float32, error) {
	vecs, err := e.decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrResponse, e.name, err)
	}
	if len(vecs) != want {
		return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrResponse, e.name, len(vecs), want)
	}
	for i, v := range vecs {
		if len(v) != e.opts.Dimension {
			return nil, fmt.Errorf("%w: %s returned dimension %d for text %d, want %d (is Dimension set to the model's?)",
				ErrResponse, e.name, len(v), i, e.opts.Dimension)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%w: %s returned a non-finite value for text %d", ErrResponse, e.name, i)
			}
		}
	}
	return vecs, nil
}
