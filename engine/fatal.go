package engine

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Pebble treats some failures as fatal: a write to its log that failed
// (the commit pipeline cannot go on), a MANIFEST it could not write,
// corruption found by a background job, a broken invariant. Its default is
// to end the process, which an embedded library must never do to its
// host. mnemo routes every such path into an error the DB reports:
//
//   - Pebble's DataCorruption and BackgroundError events mark the DB as
//     failed when the error is corruption;
//   - Logger.Fatalf marks the DB as failed and then stops the goroutine
//     that called it: inside a mnemo call (guard) with a panic that guard
//     turns into the call's error, in one of Pebble's own background
//     goroutines with runtime.Goexit, so Pebble's code after Fatalf never
//     runs on state it declared broken.
//
// A failed DB answers every later call with the failure, reads included:
// after a failed commit Pebble may already show the batch to readers, and
// a write that returned an error must never be seen. IsCorruption reports
// true for corruption, errors.Is(err, ErrNoSpace) for a full disk that
// the free-space floor did not catch. Reopening is the recovery; Close
// closes Pebble unless Fatalf stopped one of Pebble's goroutines, in which
// case it only releases the directory.

// failure is a DB's sticky error state.
type failure struct {
	err       atomic.Pointer[error]
	abandoned atomic.Bool // a Pebble goroutine was stopped: do not wait on Pebble
}

func (f *failure) set(err error) { f.err.CompareAndSwap(nil, &err) }

// get returns the error every call must fail with, or nil.
func (f *failure) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// fatalPanic carries a Pebble fatal error from Logger.Fatalf up to guard.
type fatalPanic struct{ err error }

// guard runs fn, a call into Pebble made on behalf of a mnemo API call,
// and turns a Pebble fatal error raised inside it into fn's error.
//
//go:noinline
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fp, ok := r.(fatalPanic)
			if !ok {
				panic(r)
			}
			err = fp.err
		}
	}()
	return fn()
}

// guardName is guard's symbol, looked for on the stack by Fatalf.
var guardName = runtime.FuncForPC(reflect.ValueOf(guard).Pointer()).Name()

// underGuard reports whether the calling goroutine runs inside guard.
func underGuard() bool {
	pcs := make([]uintptr, 256)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if f.Function == guardName {
			return true
		}
		if !more {
			return false
		}
	}
}

// pebbleLogger routes Pebble's messages to Options.Logger (informational
// ones at Debug, with component=pebble) and its fatal errors to the DB's
// failure state (see above).
type pebbleLogger struct {
	l    *slog.Logger
	fail *failure
}

func (p pebbleLogger) Infof(format string, args ...any) {
	if p.l.Enabled(context.Background(), slog.LevelDebug) {
		p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	cause := fmt.Errorf(format, args...)
	p.l.Error("fatal error: the database fails every call until reopened", "component", "pebble", "err", cause)
	for _, a := range args {
		if e, ok := a.(error); ok {
			// Keep the error's chain for classification.
			cause = fmt.Errorf("%w (%v)", e, cause)
			break
		}
	}
	p.fail.set(classifyFatal(cause))
	err := p.fail.get()
	if underGuard() {
		panic(fatalPanic{err})
	}
	p.fail.abandoned.Store(true)
	runtime.Goexit()
}

// classifyFatal wraps a Pebble fatal error in the sentinel that says what
// it means to a caller: no space, corruption, or a failed database.
func classifyFatal(err error) error {
	switch {
	case isNoSpace(err):
		return fmt.Errorf("%w: %v (reopen the database once space is free)", ErrNoSpace, err)
	case pebble.IsCorruptionError(err):
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	default:
		return fmt.Errorf("%w: %v (reopen the database)", ErrFailed, err)
	}
}

// listener returns the Pebble event listener that feeds f.
func (f *failure) listener(l *slog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			l.Error("background error", "component", "pebble", "err", err)
			if pebble.IsCorruptionError(err) {
				f.set(fmt.Errorf("%w: %v", ErrCorrupt, err))
			}
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			l.Error("data corruption", "component", "pebble", "path", info.Path, "err", info.Details)
			f.set(fmt.Errorf("%w: %s: %v", ErrCorrupt, info.Path, info.Details))
		},
	}
}
