package embed

import (
	"bufio"
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
	"unicode/utf8"
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
// more than a batch of 128 embeddings of any current model needs. A body
// is decoded as it is read, never held whole: what a response makes an
// embedder hold is bounded by the batch (its vectors) instead.
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
	decode   func(s *jsonStream, v *vectors) error // reads a 200 response's JSON value into v
	errorMsg func(data []byte) string              // reads the start of an error response
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
		a, err := e.post(ctx, url, payload, len(batch))
		var retryable error
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("embed: %s: %w", e.name, ctx.Err())
		case errors.Is(err, ErrResponse): // over the size limit: asking again would not help
			return nil, err
		case err != nil:
			retryable = err
		case a.status == http.StatusTooManyRequests || a.status >= 500:
			retryable = fmt.Errorf("HTTP %d: %s", a.status, e.message(a.msg))
		case a.status >= 400:
			return nil, fmt.Errorf("%w: %s %s: HTTP %d: %s", ErrRequest, e.name, e.opts.Model, a.status, e.message(a.msg))
		case a.status != http.StatusOK:
			return nil, fmt.Errorf("%w: %s: unexpected HTTP %d", ErrResponse, e.name, a.status)
		default:
			return e.check(a, len(batch))
		}
		if attempt >= e.opts.MaxRetries {
			return nil, fmt.Errorf("%w: %s after %d attempts: %v", ErrUnavailable, e.name, attempt+1, retryable)
		}
		delay := wait
		if a != nil && a.retryAfter > 0 {
			delay = a.retryAfter
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("embed: %s: %w (while waiting to retry: %v)", e.name, ctx.Err(), retryable)
		case <-time.After(delay):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// maxErrorBody is how much of an error response's body is kept for its
// message.
const maxErrorBody = 64 << 10

// answer is a response as post read it.
type answer struct {
	status     int
	retryAfter time.Duration
	vecs       vectors // status 200: what the body held
	decodeErr  error   // status 200: why the body did not decode
	msg        []byte  // other statuses: the start of the body
}

// post sends one request and reads the answer. The body is read through
// the size limit and never held whole: a 200 response is decoded as it
// streams in (keeping no more vectors than the batch asked for, see
// vectors), another keeps its first maxErrorBody bytes; the rest is read
// and dropped, to the end or the limit. A body over the limit is
// ErrResponse; one that ends before it is complete (shorter than its
// Content-Length, or cut off) is an error saying it was truncated, which
// the caller retries like a network error.
func (e *httpEmbedder) post(ctx context.Context, url string, payload []byte, want int) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range e.header {
		req.Header[k] = vs
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	limit := e.maxBody
	if limit == 0 {
		limit = MaxResponseBytes
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %s: response is %d bytes, over the limit of %d bytes", ErrResponse, e.name, resp.ContentLength, limit)
	}
	// One byte more than the limit tells a response over it from one that
	// fits exactly.
	body := &countingReader{r: io.LimitReader(resp.Body, limit+1)}
	a := &answer{status: resp.StatusCode, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	if a.status == http.StatusOK {
		a.vecs = vectors{want: want, dim: e.opts.Dimension}
		s := newJSONStream(body)
		if a.decodeErr = s.value(func() error { return e.decode(s, &a.vecs) }); a.decodeErr == nil {
			a.decodeErr = s.end()
		}
	} else {
		a.msg, _ = io.ReadAll(io.LimitReader(body, maxErrorBody))
	}
	io.Copy(io.Discard, body)
	switch {
	case body.n > limit:
		return nil, fmt.Errorf("%w: %s: response is over the limit of %d bytes", ErrResponse, e.name, limit)
	case body.err != nil && resp.ContentLength >= 0:
		return nil, fmt.Errorf("response truncated after %d of %d bytes: %v", body.n, resp.ContentLength, body.err)
	case body.err != nil:
		return nil, fmt.Errorf("response truncated after %d bytes: %v", body.n, body.err)
	}
	return a, nil
}

// countingReader counts the bytes read through it and keeps the first
// error other than io.EOF.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
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

// check verifies a decoded response: its count, dimension and values.
func (e *httpEmbedder) check(a *answer, want int) ([][]float32, error) {
	if a.decodeErr != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrResponse, e.name, a.decodeErr)
	}
	v := &a.vecs
	if v.n != want {
		return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrResponse, e.name, v.n, want)
	}
	vecs := make([][]float32, want)
	lens := make([]int, want)
	for _, it := range v.items { // all of them: there are want
		if it.index < 0 || it.index >= want || vecs[it.index] != nil {
			return nil, fmt.Errorf("%w: %s: index %d out of place", ErrResponse, e.name, it.index)
		}
		vecs[it.index], lens[it.index] = it.vec, it.n
		if vecs[it.index] == nil {
			vecs[it.index] = []float32{}
		}
	}
	for i, v := range vecs {
		if lens[i] != e.opts.Dimension {
			return nil, fmt.Errorf("%w: %s returned dimension %d for text %d, want %d (is Dimension set to the model's?)",
				ErrResponse, e.name, lens[i], i, e.opts.Dimension)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%w: %s returned a non-finite value for text %d", ErrResponse, e.name, i)
			}
		}
	}
	return vecs, nil
}

// vectors holds the vectors of a response as it is decoded: at most want
// of them, each of at most dim values, so that what a response makes the
// client hold is bounded by the request whatever its size (one with more
// is refused anyway). n counts every vector, and each item the values of
// its vector.
type vectors struct {
	want, dim int
	items     []vectorItem
	n         int
}

type vectorItem struct {
	index int       // the text it embeds
	vec   []float32 // its first dim values (nil for JSON null)
	n     int       // how many values it has
}

// reset forgets the vectors read so far (a repeated key replaces them, as
// encoding/json does).
func (v *vectors) reset() { v.items, v.n = v.items[:0], 0 }

// room returns how many values the next vector may keep: dim, or none
// when it is past want.
func (v *vectors) room() int {
	if v.n >= v.want {
		return 0
	}
	return v.dim
}

// add records the next vector.
func (v *vectors) add(index int, vec []float32, n int) {
	if v.n < v.want {
		v.items = append(v.items, vectorItem{index, vec, n})
	}
	v.n++
}

// Limits of jsonStream.
const (
	maxJSONToken = 1 << 10 // the longest number, or key kept
	maxJSONDepth = 10000   // as encoding/json
)

// jsonStream reads one JSON document from a reader a token at a time,
// holding no more of it than one number or key (up to maxJSONToken
// bytes): whitespace, and the strings and values a reader skips, pass
// through without being kept. It reads what encoding/json reads (keys
// are matched without regard to case, as encoding/json matches struct
// fields) and refuses what it refuses. Not safe for concurrent use.
type jsonStream struct {
	r     *bufio.Reader
	tok   []byte // the current number or key
	depth int
}

func newJSONStream(r io.Reader) *jsonStream {
	return &jsonStream{r: bufio.NewReaderSize(r, 32<<10)}
}

// readByte reads the next byte; the end of the input is an unexpected EOF.
func (s *jsonStream) readByte() (byte, error) {
	c, err := s.r.ReadByte()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return c, err
}

// peek returns the next byte that is not whitespace, without consuming it.
func (s *jsonStream) peek() (byte, error) {
	for {
		c, err := s.readByte()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, s.r.UnreadByte()
		}
	}
}

// expect consumes the next byte that is not whitespace, which must be c.
func (s *jsonStream) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("invalid character %q, want %q", got, c)
	}
	_, err = s.r.ReadByte()
	return err
}

// value reads the document's one value with read, which is not called
// when the value is null (encoding/json leaves its target as it is).
func (s *jsonStream) value(read func() error) error {
	if null, err := s.null(); null || err != nil {
		return err
	}
	return read()
}

// end checks that only whitespace follows the value.
func (s *jsonStream) end() error {
	c, err := s.peek()
	switch {
	case err == io.ErrUnexpectedEOF:
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("invalid character %q after top-level value", c)
}

// null consumes a null if one comes next, and reports whether it did.
func (s *jsonStream) null() (bool, error) {
	c, err := s.peek()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, s.literal("null")
}

func (s *jsonStream) literal(word string) error {
	for i := 0; i < len(word); i++ {
		c, err := s.readByte()
		if err != nil {
			return err
		}
		if c != word[i] {
			return fmt.Errorf("invalid character %q in literal %s", c, word)
		}
	}
	return nil
}

// nest enters an object or a list.
func (s *jsonStream) nest() error {
	if s.depth++; s.depth > maxJSONDepth {
		return fmt.Errorf("exceeded max depth %d", maxJSONDepth)
	}
	return nil
}

// object reads an object, calling field when the stream is at each
// value, which field must read, with the value's key: the one of keys
// that it matches, or "" for any other.
func (s *jsonStream) object(keys []string, field func(key string) error) error {
	if err := s.nest(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if err := s.expect('{'); err != nil {
		return err
	}
	if c, err := s.peek(); err != nil || c == '}' {
		if err == nil {
			_, err = s.r.ReadByte()
		}
		return err
	}
	for {
		if err := s.expect('"'); err != nil {
			return err
		}
		key, err := s.key(keys)
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		c, err := s.peek()
		if err != nil {
			return err
		}
		s.r.ReadByte()
		switch c {
		case ',':
		case '}':
			return nil
		default:
			return fmt.Errorf("invalid character %q after object key:value pair", c)
		}
	}
}

// array reads a list, calling elem when the stream is at each element,
// which elem must read.
func (s *jsonStream) array(elem func() error) error {
	if err := s.nest(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if err := s.expect('['); err != nil {
		return err
	}
	if c, err := s.peek(); err != nil || c == ']' {
		if err == nil {
			_, err = s.r.ReadByte()
		}
		return err
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		c, err := s.peek()
		if err != nil {
			return err
		}
		s.r.ReadByte()
		switch c {
		case ',':
		case ']':
			return nil
		default:
			return fmt.Errorf("invalid character %q after array element", c)
		}
	}
}

// key reads the rest of a key after its opening quote and returns the
// one of keys it matches, as encoding/json matches a struct's fields
// (without regard to case), or "" for any other.
func (s *jsonStream) key(keys []string) (string, error) {
	if err := s.str(true); err != nil {
		return "", err
	}
	raw := s.tok
	if len(raw) > maxJSONToken {
		return "", nil // longer than any of keys
	}
	plain := true // ASCII without escapes: compared as it is
	for _, c := range raw {
		plain = plain && c != '\\' && c < utf8.RuneSelf
	}
	if plain {
		for _, k := range keys {
			if asciiEqualFold(raw[1:len(raw)-1], k) {
				return k, nil
			}
		}
		return "", nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return "", err
	}
	for _, k := range keys {
		if strings.EqualFold(name, k) {
			return k, nil
		}
	}
	return "", nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// str reads the rest of a string after its opening quote; with keep, it
// leaves the string's JSON, quotes included, in s.tok, as far as
// maxJSONToken+1 bytes of it (enough to tell a longer one).
func (s *jsonStream) str(keep bool) error {
	s.tok = append(s.tok[:0], '"')
	add := func(c byte) {
		if keep && len(s.tok) <= maxJSONToken {
			s.tok = append(s.tok, c)
		}
	}
	for {
		c, err := s.readByte()
		if err != nil {
			return err
		}
		add(c)
		switch {
		case c == '"':
			return nil
		case c < 0x20:
			return fmt.Errorf("invalid character %q in string literal", c)
		case c == '\\':
			if c, err = s.readByte(); err != nil {
				return err
			}
			add(c)
			n := 0 // hex digits that follow
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				n = 4
			default:
				return fmt.Errorf("invalid character %q in string escape code", c)
			}
			for range n {
				if c, err = s.readByte(); err != nil {
					return err
				}
				if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
					return fmt.Errorf("invalid character %q in \\u hexadecimal character escape", c)
				}
				add(c)
			}
		}
	}
}

// number reads a number literal (up to maxJSONToken bytes); a value of
// another kind is an error naming it.
func (s *jsonStream) number() ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != '-' && !('0' <= c && c <= '9') {
		return nil, fmt.Errorf("invalid character %q, want a number", c)
	}
	s.tok = s.tok[:0]
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !('0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			if err := s.r.UnreadByte(); err != nil {
				return nil, err
			}
			break
		}
		if len(s.tok) == maxJSONToken {
			return nil, fmt.Errorf("number of more than %d bytes", maxJSONToken)
		}
		s.tok = append(s.tok, c)
	}
	if !json.Valid(s.tok) {
		return nil, fmt.Errorf("invalid number %q", s.tok)
	}
	return s.tok, nil
}

// skip reads a value of any kind and drops it.
func (s *jsonStream) skip() error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	switch c {
	case '{':
		return s.object(nil, func(string) error { return s.skip() })
	case '[':
		return s.array(s.skip)
	case '"':
		s.r.ReadByte()
		return s.str(false)
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	_, err = s.number()
	return err
}

// integer reads a number into an int, as encoding/json does (an integer
// literal within range).
func (s *jsonStream) integer() (int, error) {
	tok, err := s.number()
	if err != nil {
		return 0, err
	}
	i, err := strconv.ParseInt(string(tok), 10, 0)
	if err != nil {
		return 0, fmt.Errorf("cannot read number %s as an int", tok)
	}
	return int(i), nil
}

// floats reads a list of numbers as encoding/json reads it into a
// []float32 (null is nil, a null element 0), keeping at most room of
// them; it returns those and how many there were.
func (s *jsonStream) floats(room int) ([]float32, int, error) {
	var vec []float32
	n := 0
	err := s.value(func() error {
		vec = make([]float32, 0, room)
		return s.array(func() error {
			var x float32
			err := s.value(func() error {
				tok, err := s.number()
				if err != nil {
					return err
				}
				f, err := strconv.ParseFloat(string(tok), 32)
				if err != nil {
					return fmt.Errorf("cannot read number %s as a float32", tok)
				}
				x = float32(f)
				return nil
			})
			if n++; len(vec) < room {
				vec = append(vec, x)
			}
			return err
		})
	})
	return vec, n, err
}
