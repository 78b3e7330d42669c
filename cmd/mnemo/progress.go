package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Intervals between two progress reports: on a terminal the line is
// redrawn in place, so it can change often; elsewhere each report is a
// line of a log.
const (
	redrawEvery = 200 * time.Millisecond
	lineEvery   = 5 * time.Second
	// rateAfter is how long a run goes before its rate (and so its time
	// left) is shown: over the first instants it means nothing.
	rateAfter = time.Second
)

// progress reports how far a long run has come: how many items are done,
// their rate and, when the size of the input is known, the share of it
// read and the time left. On a terminal it keeps one line up to date in
// place ("\r", padded over the previous text); elsewhere (--progress into
// a file or a pipe) each report is a line of its own, at most one every
// lineEvery.
//
// A nil *progress reports nothing, so callers need not check. A progress
// writes only when called and starts no goroutine; it is not safe for
// concurrent use.
type progress struct {
	w      io.Writer
	verb   string // "importing"
	items  string // plural noun of the items: "records"
	size   int64  // bytes of input, 0 if unknown
	total  int64  // items in all, 0 if unknown (then size says how far)
	redraw bool   // w is a terminal: keep one line up to date in place
	now    func() time.Time
	start  time.Time
	last   time.Time // of the last report
	width  int       // of the line on the terminal, 0 if none is shown
}

// newProgress returns a progress reporting on w, which it redraws in
// place when w is a terminal.
func newProgress(w io.Writer, verb, items string, size int64) *progress {
	return &progress{w: w, verb: verb, items: items, size: size, redraw: isTerminal(w), now: time.Now, start: time.Now()}
}

// newCountProgress returns a progress over a known number of items,
// total, such as the vectors of a build.
func newCountProgress(w io.Writer, verb, items string, total int64) *progress {
	p := newProgress(w, verb, items, 0)
	p.total = total
	return p
}

// update reports that n items are done and read bytes of the input
// consumed, if a report is due: on a terminal, redrawEvery after the last
// one or at once if the line was cleared; elsewhere lineEvery after the
// last one.
func (p *progress) update(n, read int64) {
	if p == nil {
		return
	}
	now := p.now()
	every := lineEvery
	if p.redraw {
		every = redrawEvery
	}
	if now.Sub(p.last) < every && (p.width > 0 || !p.redraw) {
		return
	}
	p.last = now
	line := p.line(n, read, now.Sub(p.start))
	if !p.redraw {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := max(p.width-len(line), 0)
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", pad))
	p.width = len(line)
}

// line describes n items done and read bytes consumed after elapsed.
func (p *progress) line(n, read int64, elapsed time.Duration) string {
	s := fmt.Sprintf("%s: %d %s", p.verb, n, p.items)
	if p.total > 0 {
		s = fmt.Sprintf("%s: %d/%d %s (%d%%)", p.verb, n, p.total, p.items, n*100/p.total)
		if elapsed >= rateAfter {
			s += ", " + rate(n, elapsed, p.items)
			if n > 0 && n < p.total {
				left := time.Duration(float64(elapsed) * float64(p.total-n) / float64(n))
				s += fmt.Sprintf(", %s left", max(left.Round(time.Second), time.Second))
			}
		}
		return s
	}
	if p.size > 0 {
		s += fmt.Sprintf(", %s (%d%%)", bytesOf(read, p.size), read*100/p.size)
	} else if read > 0 {
		s += ", " + bytesOf(read, read)
	}
	if elapsed < rateAfter {
		return s
	}
	s += ", " + rate(n, elapsed, p.items)
	if p.size > 0 && read > 0 && read < p.size {
		left := time.Duration(float64(elapsed) * float64(p.size-read) / float64(read))
		s += fmt.Sprintf(", %s left", max(left.Round(time.Second), time.Second))
	}
	return s
}

// clear takes the line off the terminal, so that other output can be
// written there; the next update draws it again at once.
func (p *progress) clear() {
	if p == nil || p.width == 0 {
		return
	}
	fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
	p.width = 0
}

// summary describes the whole run, n items: " in 6.2s (8065 records/s)".
// It is empty for a nil progress.
func (p *progress) summary(n int64) string {
	if p == nil {
		return ""
	}
	elapsed := p.now().Sub(p.start)
	return fmt.Sprintf(" in %s (%s)", elapsed.Round(time.Millisecond), rate(n, elapsed, p.items))
}

// rate formats n items over elapsed as "8065 records/s".
func rate(n int64, elapsed time.Duration, items string) string {
	r := float64(n) / max(elapsed.Seconds(), 1e-9)
	if r < 10 {
		return fmt.Sprintf("%.1f %s/s", r, items)
	}
	return fmt.Sprintf("%.0f %s/s", r, items)
}

// bytesOf formats n bytes of total as "3.1/10.0 MB", or n alone as
// "3.1 MB" when n == total, in the unit that suits total.
func bytesOf(n, total int64) string {
	unit, div := "B", 1.0
	switch {
	case total >= 1e9:
		unit, div = "GB", 1e9
	case total >= 1e6:
		unit, div = "MB", 1e6
	case total >= 1e3:
		unit, div = "kB", 1e3
	}
	prec := 1
	if unit == "B" {
		prec = 0
	}
	if n == total {
		return fmt.Sprintf("%.*f %s", prec, float64(n)/div, unit)
	}
	return fmt.Sprintf("%.*f/%.*f %s", prec, float64(n)/div, prec, float64(total)/div, unit)
}

// isTerminal reports whether w is a terminal: a character device, which
// also counts /dev/null, where the output is harmlessly lost.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
