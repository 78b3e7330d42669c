package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineTransport is MCP's stdio transport, newline-delimited JSON-RPC
// messages on a reader and a writer, that outlives a bad message: a line
// that is not JSON gets a parse error response, one that is no JSON-RPC
// message an invalid-request response, and one over max bytes (read no
// further than max) the same; then the next line is read. The SDK's own
// stdio transport ends the session at the first such line, dropping the
// calls in flight. At the end of the input it answers the calls in
// flight (for up to eofGrace) before it reports the end, which ends the
// session: a client may pipe its requests in and close its side.
type lineTransport struct {
	r   io.Reader
	w   io.Writer
	max int
}

// Connect starts the goroutine that reads lines; it ends at the end of
// the input, or at the next line after Close (a blocked read of standard
// input cannot be interrupted).
func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{lines: make(chan line), closed: make(chan struct{}), w: t.w}
	go c.readLines(bufio.NewReaderSize(t.r, 64<<10), t.max)
	return c, nil
}

// line is one line of input: its bytes, or tooLong, or the read's error.
type line struct {
	b       []byte
	tooLong bool
	err     error
}

// lineConn is a lineTransport's connection. Read is called by one
// goroutine at a time (the SDK's), Write and Close by any.
type lineConn struct {
	lines  chan line
	closed chan struct{}
	once   sync.Once
	wmu    sync.Mutex // serialises writes
	w      io.Writer

	pmu     sync.Mutex // guards pending and broken
	pending int        // calls read and not yet answered
	broken  bool       // a write failed: no answer will be written
}

// eofGrace bounds how long the end of the input waits for the calls in
// flight to be answered.
const eofGrace = 10 * time.Second

// drain waits until every call read has been answered, eofGrace at most;
// not at all once a write failed or the connection was closed.
func (c *lineConn) drain(ctx context.Context) {
	deadline := time.Now().Add(eofGrace)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		c.pmu.Lock()
		done := c.pending <= 0 || c.broken
		c.pmu.Unlock()
		if done {
			return
		}
		select {
		case <-c.closed:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (c *lineConn) readLines(r *bufio.Reader, max int) {
	for {
		l := readLine(r, max)
		select {
		case c.lines <- l:
		case <-c.closed:
			return
		}
		if l.err != nil {
			return
		}
	}
}

// readLine reads one line of at most max bytes; a longer one is read to
// its end and reported tooLong, without keeping more than max bytes.
func readLine(r *bufio.Reader, max int) line {
	var b []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(b)+len(chunk) > max+1 { // +1: the newline
				tooLong, b = true, nil
			} else {
				b = append(b, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (len(b) > 0 || tooLong):
			return line{b: b, tooLong: tooLong} // the last line has no newline; EOF comes next
		case err != nil:
			return line{err: err}
		}
		return line{b: b, tooLong: tooLong}
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var l line
		select {
		case l = <-c.lines:
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if l.err != nil {
			c.drain(ctx)
			return nil, l.err
		}
		b := bytes.TrimSpace(l.b)
		switch {
		case l.tooLong:
			c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message over %d bytes, the most this server reads", maxRequestBytes))
			continue
		case len(b) == 0:
			continue
		case !json.Valid(b):
			c.refuse(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON (or nests deeper than 10000 levels)")
			continue
		}
		msg, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			var probe struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(b, &probe) // an array or a scalar has no id: null
			c.refuse(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
			continue
		}
		if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
			c.pmu.Lock()
			c.pending++
			c.pmu.Unlock()
		}
		return msg, nil
	}
}

// refuse answers a message that cannot be handled with a JSON-RPC error
// response; id is the message's when it has a usable one, else null.
func (c *lineConn) refuse(id json.RawMessage, code int, msg string) {
	if len(id) == 0 || id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' {
		id = json.RawMessage("null")
	}
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	c.write(resp)
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.write(b)
	c.pmu.Lock()
	if _, ok := msg.(*jsonrpc.Response); ok {
		c.pending--
	}
	if err != nil {
		c.broken = true
	}
	c.pmu.Unlock()
	return err
}

func (c *lineConn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	_, err := c.w.Write(append(b, '\n'))
	return err
}

func (c *lineConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *lineConn) SessionID() string { return "" }
