package engine

import (
	"github.com/mnemodb/mnemo"
	"log/slog"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/engine/internal/localsock"
)

// Live access: the process that holds a database (Open takes its lock,
// so no other process can open it) serves read-only requests and backups
// to other processes of the same user on the same machine, over a Unix
// socket in the database directory:
//
//	DIR/live.sock   mode 0600, owned by the holder's user
//
// The protocol is HTTP/1.1 with JSON bodies: POST /v1/<op>, where op is
// identity, stats, collections, collection, count, get, scan, query,
// verify or backup. An error is a non-2xx status with
// {"error": "<message>", "kind": "<sentinel>"}, kind naming the sentinel
// error the message wraps (see liveSentinels). DialLive is the client.
//
// Who may connect: the socket's mode keeps other users' connects out;
// the server reads each peer's user from the kernel and drops another
// user's connection; the client checks that the socket is its user's
// with mode 0600, that the process serving it is the one holding the
// database's lock, and that the database id it reports is the one on
// disk. Nothing reaches the socket from another machine.

const (
	liveSocket = "live.sock"

	liveMaxBody        = 32 << 20 // request body
	liveMaxConns       = 32
	liveMaxActive      = 4 // requests served at once
	liveRequestTimeout = 30 * time.Second
	liveBackupTimeout  = 10 * time.Minute
	liveMaxPage        = 10000    // records in a scan page
	liveMaxPageBytes   = 16 << 20 // encoded records in a scan page
	liveCloseWait      = 5 * time.Second
)

// liveIdleTimeout closes a connection idle that long, or whose request's
// header takes longer; a variable for tests.
var liveIdleTimeout = 10 * time.Second

// liveHook, when set (by tests), is called at the start of every request
// with its op, inside the request's panic guard.
var liveHook func(op string)

// liveServer serves a DB's live access. Its goroutines (http.Server's
// Serve and one per connection) end in stop, which DB.Close calls before
// anything else.
type liveServer struct {
	db     *DB
	ln     *liveListener
	srv    *http.Server
	slots  chan struct{} // one per request being served
	served chan struct{} // closed when Serve has returned
	cancel context.CancelFunc
}

// startLive starts live access for a database opened for writing in a
// directory of the operating system's filesystem, unless
// Options.NoLiveAccess. A failure to start is logged, not fatal: the
// database works without it.
func (db *DB) startLive() {
	if db.opts.NoLiveAccess || db.opts.ReadOnly || db.opts.InMemory || db.fs != vfs.Default {
		return
	}
	dir, err := filepath.Abs(db.dir)
	if err != nil {
		db.logger.Warn("live access is off", "err", err)
		return
	}
	ln, err := localsock.Listen(filepath.Join(dir, liveSocket))
	if err != nil {
		db.logger.Warn("live access is off", "err", err)
		return
	}
	base, cancel := context.WithCancel(context.Background())
	s := &liveServer{
		db:     db,
		ln:     &liveListener{Listener: ln, conns: make(chan struct{}, liveMaxConns), closed: make(chan struct{})},
		slots:  make(chan struct{}, liveMaxActive),
		served: make(chan struct{}),
		cancel: cancel,
	}
	mux := http.NewServeMux()
	for op, h := range s.handlers() {
		mux.Handle("POST /v1/"+op, s.handle(op, h, liveHook))
	}
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: liveIdleTimeout,
		ReadTimeout:       liveRequestTimeout,
		// The write deadline of every request, reset at each; handle
		// narrows it to the request's own.
		WriteTimeout:   liveBackupTimeout + time.Minute,
		IdleTimeout:    liveIdleTimeout,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return base },
		ErrorLog:       slog.NewLogLogger(db.logger.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(s.served)
		s.srv.Serve(s.ln)
	}()
	db.live = s
}

// stop stops serving: no new connection is taken, requests in flight
// are cancelled and waited for up to liveCloseWait, then every
// connection is closed.
func (s *liveServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), liveCloseWait)
	defer cancel()
	s.cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	<-s.served
	s.ln.Close()
}

// liveListener takes at most liveMaxConns connections at a time: Accept
// waits for one to close. While all are taken, each answer closes its
// connection (see handle), so waiting clients get their turn.
type liveListener struct {
	*localsock.Listener
	conns     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *liveListener) Accept() (net.Conn, error) {
	select {
	case l.conns <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.conns
		return nil, err
	}
	return &liveConn{Conn: c, release: func() { <-l.conns }}, nil
}

func (l *liveListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// liveConn gives its slot back when closed.
type liveConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *liveConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// A liveHandler answers one request: it decodes its body from dec and
// returns the response to encode, or an error.
type liveHandler func(ctx context.Context, dec *json.Decoder) (any, error)

// handle wraps h: a slot among liveMaxActive, a body of at most
// liveMaxBody, a deadline, and a panic answered with 500 (the slot
// freed, the process unharmed).
func (s *liveServer) handle(op string, h liveHandler, hook func(string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timeout := liveRequestTimeout
		if op == "backup" {
			timeout = liveBackupTimeout
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(timeout))
			rc.SetWriteDeadline(time.Now().Add(timeout + time.Second))
		} else {
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout + time.Second))
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			writeLiveError(w, http.StatusServiceUnavailable, fmt.Errorf("engine: live access: busy: %w", ctx.Err()))
			return
		}
		defer func() { <-s.slots }()
		defer func() {
			if p := recover(); p != nil {
				s.db.logger.Error("live access: a request panicked", "op", r.URL.Path, "panic", p)
				writeLiveError(w, http.StatusInternalServerError, fmt.Errorf("engine: live access: internal error"))
			}
		}()
		if len(s.ln.conns) == cap(s.ln.conns) {
			// Every connection is taken: this one closes after its answer,
			// so that a client waiting to connect gets a turn.
			w.Header().Set("Connection", "close")
		}
		if hook != nil {
			hook(op)
		}
		r.Body = http.MaxBytesReader(w, r.Body, liveMaxBody)
		dec := json.NewDecoder(r.Body)
		resp, err := h(ctx, dec)
		if err != nil {
			status := http.StatusBadRequest
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				status = http.StatusRequestEntityTooLarge
			case errors.Is(err, mnemo.ErrCollectionNotFound):
				status = http.StatusNotFound
			case errors.Is(err, context.DeadlineExceeded):
				status = http.StatusGatewayTimeout
			case errors.Is(err, mnemo.ErrClosed), errors.Is(err, context.Canceled):
				status = http.StatusServiceUnavailable
			}
			writeLiveError(w, status, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
}

// liveError is the body of an error response.
type liveError struct {
	Error string `json:"error"`
	Kind  string `json:"kind,omitempty"`
}

func writeLiveError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(liveError{Error: err.Error(), Kind: liveKind(err)})
}

// liveSentinels are the errors a live response names by kind, so that
// the client's errors match the same sentinels as a direct call's.
var liveSentinels = map[string]error{
	"closed": mnemo.ErrClosed, "collection_not_found": mnemo.ErrCollectionNotFound,
	"invalid_config": mnemo.ErrInvalidConfig, "invalid_id": mnemo.ErrInvalidID,
	"invalid_record": mnemo.ErrInvalidRecord, "dimension": mnemo.ErrDimension,
	"non_finite": mnemo.ErrNonFinite, "zero_vector": mnemo.ErrZeroVector,
	"norm_overflow": mnemo.ErrNormOverflow, "bad_filter": mnemo.ErrBadFilter,
	"bad_query": mnemo.ErrBadQuery, "backup_target": ErrBackupTarget,
	"read_only": ErrReadOnly, "no_space": ErrNoSpace, "failed": ErrFailed,
	"corrupt": ErrCorrupt, "not_database": ErrNotDatabase,
	"deadline": context.DeadlineExceeded, "canceled": context.Canceled,
}

func liveKind(err error) string {
	if IsCorruption(err) {
		return "corrupt"
	}
	for k, s := range liveSentinels {
		if s != ErrCorrupt && errors.Is(err, s) {
			return k
		}
	}
	return ""
}

// Requests and responses of live access.
type (
	liveIdentity struct {
		PID int    `json:"pid"`
		ID  string `json:"id"`
		Dir string `json:"dir"`
	}
	liveCollectionReq struct {
		Collection string `json:"collection"`
	}
	liveGetReq struct {
		Collection string `json:"collection"`
		ID         string `json:"id"`
	}
	liveGetResp struct {
		Found  bool       `json:"found"`
		Record liveRecord `json:"record"`
	}
	liveScanReq struct {
		Collection string `json:"collection"`
		After      string `json:"after"`
		Limit      int    `json:"limit"`
	}
	liveScanResp struct {
		Records []json.RawMessage `json:"records"` // liveRecord
		Next    string            `json:"next"`
	}
	liveQueryReq struct {
		Collection string    `json:"collection"`
		Query      liveQuery `json:"query"`
	}
	liveVerifyResp struct {
		Problems    []string `json:"problems"`
		Collections int      `json:"collections"`
	}
	liveBackupReq struct {
		Dest string `json:"dest"`
	}
)

// liveRecord is a mnemo.Record on the wire.
type liveRecord struct {
	ID       string         `json:"id"`
	Vector   []float32      `json:"vector,omitempty"`
	Content  string         `json:"content,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

func toLiveRecord(r mnemo.Record) liveRecord {
	return liveRecord{ID: r.ID, Vector: r.Vector, Content: r.Content, Metadata: r.Metadata}
}

func (r liveRecord) record() mnemo.Record {
	return mnemo.Record{ID: r.ID, Vector: r.Vector, Content: r.Content, Metadata: r.Metadata}
}

// liveQuery is a mnemo.Query on the wire: the filter as its JSON text.
type liveQuery struct {
	Vector        []float32       `json:"vector,omitempty"`
	Text          string          `json:"text,omitempty"`
	Mode          mnemo.Mode      `json:"mode,omitempty"`
	K             int             `json:"k,omitempty"`
	Ef            int             `json:"ef,omitempty"`
	Filter        json.RawMessage `json:"filter,omitempty"`
	MinSimilarity *float32        `json:"min_similarity,omitempty"`
	Exact         bool            `json:"exact,omitempty"`
	WithVectors   bool            `json:"with_vectors,omitempty"`
	Fusion        mnemo.Fusion    `json:"fusion"`
	BM25          *mnemo.BM25     `json:"bm25,omitempty"`
	Spread        *mnemo.Spread   `json:"spread,omitempty"`
}

func toLiveQuery(q mnemo.Query) (liveQuery, error) {
	lq := liveQuery{Vector: q.Vector, Text: q.Text, Mode: q.Mode, K: q.K, Ef: q.Ef,
		MinSimilarity: q.MinSimilarity, Exact: q.Exact, WithVectors: q.WithVectors,
		Fusion: q.Fusion, BM25: q.BM25, Spread: q.Spread}
	if t, ok := q.Filter.Tree(); ok {
		b, err := json.Marshal(filterJSON(t))
		if err != nil {
			return liveQuery{}, fmt.Errorf("%w: %v", mnemo.ErrBadFilter, err)
		}
		lq.Filter = b
	}
	return lq, nil
}

func (lq liveQuery) query() (mnemo.Query, error) {
	q := mnemo.Query{Vector: lq.Vector, Text: lq.Text, Mode: lq.Mode, K: lq.K, Ef: lq.Ef,
		MinSimilarity: lq.MinSimilarity, Exact: lq.Exact, WithVectors: lq.WithVectors,
		Fusion: lq.Fusion, BM25: lq.BM25, Spread: lq.Spread}
	if len(lq.Filter) > 0 {
		f, err := mnemo.ParseFilter(string(lq.Filter))
		if err != nil {
			return mnemo.Query{}, err
		}
		q.Filter = f
	}
	return q, nil
}

// filterJSON is a filter's tree in the syntax mnemo.ParseFilter reads.
func filterJSON(n mnemo.FilterNode) map[string]any {
	switch n.Op {
	case mnemo.FilterAnd, mnemo.FilterOr:
		kids := make([]any, len(n.Children))
		for i, c := range n.Children {
			kids[i] = filterJSON(c)
		}
		return map[string]any{string(n.Op): kids}
	case mnemo.FilterIn, mnemo.FilterNin:
		vals := n.Values
		if vals == nil {
			vals = []any{}
		}
		return map[string]any{n.Field: map[string]any{string(n.Op): vals}}
	}
	return map[string]any{n.Field: map[string]any{string(n.Op): n.Value}}
}

// liveHit is a mnemo.Hit on the wire.
type liveHit struct {
	Record     liveRecord `json:"record"`
	Distance   float32    `json:"distance"`
	Similarity float32    `json:"similarity"`
	Score      float64    `json:"score"`
	VectorRank int        `json:"vector_rank,omitempty"`
	TextRank   int        `json:"text_rank,omitempty"`
	TextScore  float64    `json:"text_score,omitempty"`
}

// decodeBody decodes one JSON value into v and refuses anything after
// it. An empty body is a zero request.
func decodeBody(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fmt.Errorf("engine: live access: request body over %d bytes: %w", liveMaxBody, err)
		}
		return fmt.Errorf("%w: live access: request: %v", mnemo.ErrBadQuery, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: live access: request: data after the JSON value", mnemo.ErrBadQuery)
	}
	return nil
}

// liveCollection decodes a request naming a collection into req and
// returns the collection, registered as an operation in flight.
func (s *liveServer) collection(dec *json.Decoder, req any, name func() string) (*Collection, func(), error) {
	if err := decodeBody(dec, req); err != nil {
		return nil, nil, err
	}
	c, err := s.db.Collection(name())
	if err != nil {
		return nil, nil, err
	}
	done, err := c.enter()
	if err != nil {
		return nil, nil, err
	}
	return c, done, nil
}

func (s *liveServer) handlers() map[string]liveHandler {
	db := s.db
	return map[string]liveHandler{
		"identity": func(ctx context.Context, dec *json.Decoder) (any, error) {
			if err := decodeBody(dec, &struct{}{}); err != nil {
				return nil, err
			}
			dir, _ := filepath.Abs(db.dir)
			return liveIdentity{PID: os.Getpid(), ID: db.id.ID, Dir: dir}, nil
		},
		"stats": func(ctx context.Context, dec *json.Decoder) (any, error) {
			if err := decodeBody(dec, &struct{}{}); err != nil {
				return nil, err
			}
			return db.Stats(ctx)
		},
		"collections": func(ctx context.Context, dec *json.Decoder) (any, error) {
			if err := decodeBody(dec, &struct{}{}); err != nil {
				return nil, err
			}
			return db.Store().Collections(ctx)
		},
		"collection": func(ctx context.Context, dec *json.Decoder) (any, error) {
			var req liveCollectionReq
			c, done, err := s.collection(dec, &req, func() string { return req.Collection })
			if err != nil {
				return nil, err
			}
			defer done()
			return c.Config(), nil
		},
		"count": func(ctx context.Context, dec *json.Decoder) (any, error) {
			var req liveCollectionReq
			c, done, err := s.collection(dec, &req, func() string { return req.Collection })
			if err != nil {
				return nil, err
			}
			defer done()
			return c.Count(), nil
		},
		"get": func(ctx context.Context, dec *json.Decoder) (any, error) {
			var req liveGetReq
			c, done, err := s.collection(dec, &req, func() string { return req.Collection })
			if err != nil {
				return nil, err
			}
			defer done()
			r, ok, err := c.Get(ctx, req.ID)
			if err != nil {
				return nil, err
			}
			return liveGetResp{Found: ok, Record: toLiveRecord(r)}, nil
		},
		"scan": func(ctx context.Context, dec *json.Decoder) (any, error) {
			var req liveScanReq
			c, done, err := s.collection(dec, &req, func() string { return req.Collection })
			if err != nil {
				return nil, err
			}
			defer done()
			return scanPage(ctx, c, req)
		},
		"query": func(ctx context.Context, dec *json.Decoder) (any, error) {
			var req liveQueryReq
			c, done, err := s.collection(dec, &req, func() string { return req.Collection })
			if err != nil {
				return nil, err
			}
			defer done()
			q, err := req.Query.query()
			if err != nil {
				return nil, err
			}
			hits, err := c.Query(ctx, q)
			if err != nil {
				return nil, err
			}
			out := make([]liveHit, len(hits))
			for i, h := range hits {
				out[i] = liveHit{Record: toLiveRecord(h.Record), Distance: h.Distance, Similarity: h.Similarity,
					Score: h.Score, VectorRank: h.VectorRank, TextRank: h.TextRank, TextScore: h.TextScore}
			}
			return out, nil
		},
		"verify": func(ctx context.Context, dec *json.Decoder) (any, error) {
			if err := decodeBody(dec, &struct{}{}); err != nil {
				return nil, err
			}
			ps, err := db.Verify(ctx)
			if err != nil {
				return nil, err
			}
			return liveVerifyResp{Problems: ps, Collections: len(db.Collections())}, nil
		},
		"backup": func(ctx context.Context, dec *json.Decoder) (any, error) {
			var req liveBackupReq
			if err := decodeBody(dec, &req); err != nil {
				return nil, err
			}
			if !filepath.IsAbs(req.Dest) {
				return nil, fmt.Errorf("%w: live backup: destination %q is not an absolute path", mnemo.ErrInvalidConfig, req.Dest)
			}
			if err := db.Backup(ctx, req.Dest); err != nil {
				return nil, err
			}
			return struct{}{}, nil
		},
	}
}

// scanPage reads a page of at most liveMaxPage records and about
// liveMaxPageBytes (at least one record, however large).
func scanPage(ctx context.Context, c *Collection, req liveScanReq) (liveScanResp, error) {
	limit := min(req.Limit, liveMaxPage) // a limit below 1 is the engine's to refuse
	page, next, err := c.Scan(ctx, req.After, limit)
	if err != nil {
		return liveScanResp{}, err
	}
	resp := liveScanResp{Records: make([]json.RawMessage, 0, len(page)), Next: next}
	size := 0
	for i, r := range page {
		b, err := json.Marshal(toLiveRecord(r))
		if err != nil {
			return liveScanResp{}, fmt.Errorf("engine: live access: record %q: %w", r.ID, err)
		}
		size += len(b)
		if i > 0 && size > liveMaxPageBytes {
			resp.Next = page[i-1].ID
			break
		}
		resp.Records = append(resp.Records, b)
	}
	return resp, nil
}

// readIdentityFile reads the database id from dir's identity file, for
// a client that cannot open the database.
func readIdentityFile(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, identityFile))
	if err != nil {
		return "", err
	}
	var id identity
	if err := json.Unmarshal(b, &id); err != nil || id.ID == "" {
		return "", fmt.Errorf("%w: identity file %s is damaged", ErrCorrupt, identityFile)
	}
	return strings.TrimSpace(id.ID), nil
}
