// Package telemetry is the timing and logging glue the backends and the
// memory adapters share: it times an operation only when a
// metrics.Recorder is set, and gives every component a usable
// *slog.Logger whether or not one was configured.
package telemetry

import (
	"io"
	"log/slog"
	"time"

	"github.com/mnemodb/mnemo/metrics"
)

// Timer times one operation for a Recorder. The zero Timer (from Start
// with a nil Recorder) records nothing and never reads the clock.
type Timer struct {
	rec   metrics.Recorder
	start time.Time
}

// Start starts timing an operation for rec; with a nil rec it returns
// the zero Timer at no cost.
func Start(rec metrics.Recorder) Timer {
	if rec == nil {
		return Timer{}
	}
	return Timer{rec: rec, start: time.Now()}
}

// On reports whether t records (its Recorder is set), so that a caller
// skips building an Event's fields when nobody listens.
func (t Timer) On() bool { return t.rec != nil }

// Done sets e.Duration to the time since Start and records e. It does
// nothing on the zero Timer.
func (t Timer) Done(e metrics.Event) {
	if t.rec == nil {
		return
	}
	e.Duration = time.Since(t.start)
	t.rec.Record(e)
}

// Record records e as it is (its Duration already set), if rec is set.
func Record(rec metrics.Recorder, e metrics.Event) {
	if rec != nil {
		rec.Record(e)
	}
}

// discard is the logger of components configured without one.
var discard = slog.New(slog.DiscardHandler)

// Logger returns l, or a logger that discards everything when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return discard
	}
	return l
}

// WriterLogger returns a logger writing text lines to w (nil when w is
// nil): the shim behind the io.Writer log options kept from before
// *slog.Logger options.
func WriterLogger(w io.Writer) *slog.Logger {
	if w == nil {
		return nil
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
