package engine

import (
	"fmt"
	"log"
	"reflect"
	"runtime"
	"strings"
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
// A failed DB answers every later call with the failure (IsCorruption
// reports true for corruption; a failed write to Pebble's log, as on a
// full disk, fails only later writes, and reads go on). Close then
// releases the directory without waiting for Pebble's goroutines, which
// may be stopped mid-way; reopening is the recovery.

// failure is a DB's sticky error state.
type failure struct {
	all    atomic.Pointer[error] // every call fails with it
	writes atomic.Pointer[error] // writes fail with it; reads go on
}

func (f *failure) setAll(err error)    { f.all.CompareAndSwap(nil, &err) }
func (f *failure) setWrites(err error) { f.writes.CompareAndSwap(nil, &err) }

// readErr returns the error every call must fail with, or nil.
func (f *failure) readErr() error {
	if p := f.all.Load(); p != nil {
		return *p
	}
	return nil
}

// writeErr returns the error a write must fail with, or nil.
func (f *failure) writeErr() error {
	if err := f.readErr(); err != nil {
		return err
	}
	if p := f.writes.Load(); p != nil {
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

// pebbleLogger routes Pebble's messages to Options.Log and its fatal
// errors to the DB's failure state (see above).
type pebbleLogger struct {
	l    *log.Logger
	fail *failure
}

func (p pebbleLogger) Infof(format string, args ...any) { p.l.Printf("pebble: "+format, args...) }
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Printf("pebble: error: "+format, args...)
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	cause := fmt.Errorf("pebble: "+format, args...)
	p.l.Printf("fatal: %v", cause)
	for _, a := range args {
		if e, ok := a.(error); ok {
			// Keep the error's chain for classification.
			cause = fmt.Errorf("%w (%v)", e, cause)
			break
		}
	}
	// Only a failed commit leaves Pebble's state intact: the write was not
	// applied, and reads go on.
	if strings.HasPrefix(format, "pebble: fatal commit error") {
		p.fail.setWrites(classifyFatal(cause, ErrWriteFailed))
	} else {
		p.fail.setAll(classifyFatal(cause, ErrFailed))
	}
	err := p.fail.writeErr()
	if underGuard() {
		panic(fatalPanic{err})
	}
	runtime.Goexit()
}

// classifyFatal wraps a Pebble fatal error in the sentinel that says what
// it means to a caller: no space, corruption, or else def.
func classifyFatal(err, def error) error {
	switch {
	case isNoSpace(err):
		return fmt.Errorf("%w: %v (reopen the database once space is free)", ErrNoSpace, err)
	case pebble.IsCorruptionError(err):
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	default:
		return fmt.Errorf("%w: %v (reopen the database)", def, err)
	}
}

// listener returns the Pebble event listener that feeds f.
func (f *failure) listener(l *log.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			l.Printf("pebble: background error: %v", err)
			if pebble.IsCorruptionError(err) {
				f.setAll(fmt.Errorf("%w: %v", ErrCorrupt, err))
			}
		},
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			l.Printf("pebble: data corruption: %v", info)
			f.setAll(fmt.Errorf("%w: %s: %v", ErrCorrupt, info.Path, info.Details))
		},
	}
}
