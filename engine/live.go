package engine

import (
	"github.com/mnemodb/mnemo"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mnemodb/mnemo/engine/internal/localsock"
)

// ErrNoLiveAccess reports a database whose holder cannot be reached by
// live access: it is not open in another process, the process holding it
// turned live access off (Options.NoLiveAccess) or predates it, or the
// socket failed a check. The error wrapping it says which.
var ErrNoLiveAccess = errors.New("engine: no live access")

// Live is a read-only connection to a database that another process of
// the same user holds open, through that process's live access (see
// Options.NoLiveAccess). It is a mnemo.Store whose writes return
// ErrReadOnly; Stats, Verify and Backup run in the holding process, as
// DB's do. It is safe for concurrent use by multiple goroutines. Close
// closes its connections; the database stays open in its holder.
type Live struct {
	dir    string
	socket string
	pid    int
	id     string
	client *http.Client
	tr     *http.Transport

	closeOnce sync.Once

	mu    sync.Mutex    // protects first
	first *net.UnixConn // the connection DialLive checked, until used
}

// DialLive connects to the live access of the database in dir, held open
// by another process of this user. It checks that the socket is this
// user's with mode 0600, that the process serving it is the one holding
// the database's lock, and that the database it serves has the id on
// disk. What fails wraps ErrNoLiveAccess with the reason. ctx bounds the
// dial; every later call takes its own.
func DialLive(ctx context.Context, dir string) (*Live, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLiveAccess, err)
	}
	if err := localsock.Supported(); err != nil {
		return nil, fmt.Errorf("%w: not available on this system (%v)", ErrNoLiveAccess, err)
	}
	pid, held := liveHolder(abs)
	if !held {
		return nil, fmt.Errorf("%w: %s is not open in another process", ErrNoLiveAccess, dir)
	}
	l := &Live{dir: dir, socket: filepath.Join(abs, liveSocket), pid: pid}
	conn, cred, err := localsock.Dial(l.socket)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		// No socket, or one a killed holder left.
		return nil, fmt.Errorf("%w: process %d holds %s without serving live access (turned off with Options.NoLiveAccess, opened read-only, or a mnemo without it)", ErrNoLiveAccess, pid, dir)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrNoLiveAccess, err)
	case cred.PID != pid:
		conn.Close()
		return nil, fmt.Errorf("%w: %s is served by process %d, but process %d holds the database: refused", ErrNoLiveAccess, l.socket, cred.PID, pid)
	}
	l.first = conn
	l.tr = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if c := l.takeFirst(); c != nil {
				return c, nil
			}
			c, cred, err := localsock.Dial(l.socket)
			if err != nil {
				return nil, err
			}
			if cred.PID != l.pid {
				c.Close()
				return nil, fmt.Errorf("%w: %s is now served by process %d, not %d", ErrNoLiveAccess, l.socket, cred.PID, l.pid)
			}
			return c, nil
		},
		MaxIdleConnsPerHost: liveMaxActive,
		IdleConnTimeout:     5 * time.Second, // below the server's idle timeout
		DisableCompression:  true,
	}
	l.client = &http.Client{Transport: l.tr}
	var ident liveIdentity
	if err := l.call(ctx, "identity", struct{}{}, &ident); err != nil {
		l.Close()
		return nil, fmt.Errorf("%w: %v", ErrNoLiveAccess, err)
	}
	onDisk, err := readIdentityFile(abs)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrNoLiveAccess, dir, err)
	}
	if ident.PID != pid || ident.ID != onDisk {
		l.Close()
		return nil, fmt.Errorf("%w: %s answers as process %d with database %s; process %d holds database %s: refused",
			ErrNoLiveAccess, l.socket, ident.PID, ident.ID, pid, onDisk)
	}
	l.id = ident.ID
	return l, nil
}

// liveHolder is lockHolder, but for tests, where the holder is the test
// itself (which F_GETLK does not report to the lock's own process).
var liveHolder = lockHolder

// takeFirst hands out the connection DialLive checked, once.
func (l *Live) takeFirst() net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == nil {
		return nil
	}
	c := l.first
	l.first = nil
	return c
}

// Holder returns the id of the process that holds the database.
func (l *Live) Holder() int { return l.pid }

// Dir returns the database directory, as given to DialLive.
func (l *Live) Dir() string { return l.dir }

// Close closes the connections. The database stays open in its holder.
// Closing twice does nothing more.
func (l *Live) Close() error {
	l.closeOnce.Do(func() {
		if c := l.takeFirst(); c != nil {
			c.Close()
		}
		l.tr.CloseIdleConnections()
	})
	return nil
}

// call posts req to op and decodes the answer into resp.
func (l *Live) call(ctx context.Context, op string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("engine: live %s: %w", op, err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://mnemo/v1/"+op, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("engine: live %s: %w", op, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := l.client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("engine: live %s: %w", op, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var le liveError
		if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&le); err != nil || le.Error == "" {
			return fmt.Errorf("engine: live %s: %s", op, res.Status)
		}
		return &remoteError{msg: le.Error, kind: liveSentinels[le.Kind]}
	}
	if err := json.NewDecoder(res.Body).Decode(resp); err != nil {
		return fmt.Errorf("engine: live %s: answer: %w", op, err)
	}
	return nil
}

// remoteError is an error of the holding process: its message, matching
// the sentinel it wrapped there.
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

// Stats returns the database's statistics, as DB.Stats in the holder.
func (l *Live) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := l.call(ctx, "stats", struct{}{}, &st)
	return st, err
}

// Verify checks the database as DB.Verify does, in the holder, and
// returns its problems and the number of collections it checked.
func (l *Live) Verify(ctx context.Context) (problems []string, collections int, err error) {
	var resp liveVerifyResp
	if err := l.call(ctx, "verify", struct{}{}, &resp); err != nil {
		return nil, 0, err
	}
	return resp.Problems, resp.Collections, nil
}

// Backup has the holder write a backup into dest, an absolute path, as
// DB.Backup does. The holder writes it with its own permissions: dest is
// a directory on this machine, absent or empty.
func (l *Live) Backup(ctx context.Context, dest string) error {
	if !filepath.IsAbs(dest) {
		return fmt.Errorf("%w: live backup: destination %q is not an absolute path", mnemo.ErrInvalidConfig, dest)
	}
	return l.call(ctx, "backup", liveBackupReq{Dest: dest}, &struct{}{})
}

// readOnly is the error of every write through a Live.
func (l *Live) readOnly() error {
	return fmt.Errorf("%w: %s is reached through the live access of process %d", ErrReadOnly, l.dir, l.pid)
}

// CreateCollection returns ErrReadOnly.
func (l *Live) CreateCollection(context.Context, string, mnemo.CollectionConfig) (mnemo.Collection, error) {
	return nil, l.readOnly()
}

// Collection returns the named collection.
func (l *Live) Collection(ctx context.Context, name string) (mnemo.Collection, error) {
	var cfg mnemo.CollectionConfig
	if err := l.call(ctx, "collection", liveCollectionReq{Collection: name}, &cfg); err != nil {
		return nil, err
	}
	return &liveCollection{l: l, name: name, cfg: cfg}, nil
}

// Collections returns the names of all collections, sorted.
func (l *Live) Collections(ctx context.Context) ([]string, error) {
	var names []string
	err := l.call(ctx, "collections", struct{}{}, &names)
	return names, err
}

// DropCollection returns ErrReadOnly.
func (l *Live) DropCollection(context.Context, string) error { return l.readOnly() }

// liveCollection is a collection reached through live access.
type liveCollection struct {
	l    *Live
	name string
	cfg  mnemo.CollectionConfig
}

func (c *liveCollection) Name() string                   { return c.name }
func (c *liveCollection) Config() mnemo.CollectionConfig { return c.cfg }

func (c *liveCollection) Upsert(context.Context, ...mnemo.Record) ([]string, error) {
	return nil, c.l.readOnly()
}

func (c *liveCollection) Delete(context.Context, ...string) (int, error) {
	return 0, c.l.readOnly()
}

func (c *liveCollection) Get(ctx context.Context, id string) (mnemo.Record, bool, error) {
	var resp liveGetResp
	if err := c.l.call(ctx, "get", liveGetReq{Collection: c.name, ID: id}, &resp); err != nil {
		return mnemo.Record{}, false, err
	}
	if !resp.Found {
		return mnemo.Record{}, false, nil
	}
	return resp.Record.record(), true, nil
}

// Scan returns a page of at most limit records; the holder cuts a page
// at 10,000 records or about 16 MiB, and next says where to go on.
func (c *liveCollection) Scan(ctx context.Context, after string, limit int) ([]mnemo.Record, string, error) {
	var resp struct {
		Records []liveRecord `json:"records"`
		Next    string       `json:"next"`
	}
	if err := c.l.call(ctx, "scan", liveScanReq{Collection: c.name, After: after, Limit: limit}, &resp); err != nil {
		return nil, "", err
	}
	page := make([]mnemo.Record, len(resp.Records))
	for i, r := range resp.Records {
		page[i] = r.record()
	}
	return page, resp.Next, nil
}

func (c *liveCollection) Count(ctx context.Context) (int, error) {
	var n int
	err := c.l.call(ctx, "count", liveCollectionReq{Collection: c.name}, &n)
	return n, err
}

func (c *liveCollection) Query(ctx context.Context, q mnemo.Query) ([]mnemo.Hit, error) {
	lq, err := toLiveQuery(q)
	if err != nil {
		return nil, err
	}
	var resp []liveHit
	if err := c.l.call(ctx, "query", liveQueryReq{Collection: c.name, Query: lq}, &resp); err != nil {
		return nil, err
	}
	hits := make([]mnemo.Hit, len(resp))
	for i, h := range resp {
		hits[i] = mnemo.Hit{Record: h.Record.record(), Distance: h.Distance, Similarity: h.Similarity,
			Score: h.Score, VectorRank: h.VectorRank, TextRank: h.TextRank, TextScore: h.TextScore}
	}
	return hits, nil
}
