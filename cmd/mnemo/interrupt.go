package main

import (
	"context"
	"errors"
	"io"
)

// exitInterrupted is the exit status of a command a signal interrupted:
// 130, the shell's 128 + 2 for SIGINT, for SIGTERM as well.
const exitInterrupted = 130

// An interruptedError is the error of a command its context's end
// stopped, saying what it had done by then: run prints "interrupted: "
// and done.
type interruptedError struct {
	done string // "20 records committed; ...", for the user
}

func (e *interruptedError) Error() string { return "interrupted: " + e.done }

// interruption is the line run prints for err, the error of a command a
// signal interrupted: "interrupted", with what the command had done when
// err is (or wraps) an interruptedError.
func interruption(err error) string {
	if ie, ok := errors.AsType[*interruptedError](err); ok {
		return ie.Error()
	}
	return "interrupted"
}

// A ctxReader reads r until ctx is done, then returns ctx's error, even
// while a Read of r is blocked (on a terminal, or a pipe whose writer is
// silent): each Read of r runs in a goroutine, into a buffer of the
// ctxReader's, and an abandoned one stays blocked until r returns, or
// the process exits. A ctxReader is for a command's input, read to the
// end or until the command is interrupted. It is not safe for concurrent
// use.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
}

// readResult is what a Read of a ctxReader's r returned.
type readResult struct {
	n   int
	err error
}

func (cr *ctxReader) Read(p []byte) (int, error) {
	if err := cr.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if len(cr.buf) < len(p) {
		cr.buf = make([]byte, len(p))
	}
	buf := cr.buf[:len(p)]
	done := make(chan readResult, 1)
	go func() {
		n, err := cr.r.Read(buf)
		done <- readResult{n, err}
	}()
	select {
	case res := <-done:
		return copy(p, buf[:res.n]), res.err
	case <-cr.ctx.Done():
		cr.buf = nil // the abandoned Read may still write into it
		return 0, cr.ctx.Err()
	}
}

// await runs f in a goroutine and returns its error, or ctx's error as
// soon as ctx is done, leaving f to run on until the process exits: for
// work that takes no context and that the process's exit may cut short,
// since it writes nothing that must be finished or closed (bench's
// measurements, an open for reading). When await returns ctx's error,
// the caller must not touch what f writes.
func await(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// openReadOnly returns what open returns: a database opened for reading
// only, by a function that takes no context and may take long (an engine
// database replays its log and may rebuild an index in memory). Once ctx
// is done it returns ctx's error, at once, and leaves the open to the
// process's exit (see await): an open for reading writes nothing, so it
// can be abandoned where one for writing is left to finish.
func openReadOnly[DB any](ctx context.Context, open func() (DB, error)) (DB, error) {
	var db, none DB
	if err := ctx.Err(); err != nil {
		return none, err
	}
	if err := await(ctx, func() (err error) { db, err = open(); return err }); err != nil {
		return none, err // db may still be written by the abandoned open
	}
	return db, nil
}
