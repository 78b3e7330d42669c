// Package limitest helps the tests that guard limits on what a write or a
// filter may hold (nesting, size): a regression there never returns and
// allocates gigabytes a second, so each risky call runs under Bounded. It
// is not promised to users.
package limitest

import (
	"fmt"
	"runtime"
	"time"
)

const (
	// Timeout and Alloc stop a runaway call: no call guarded here needs
	// more than a few milliseconds or megabytes.
	Timeout = time.Minute
	Alloc   = 1 << 30
	// SmallAlloc is what a rejected or accepted call may allocate.
	SmallAlloc = 50 << 20
)

// Bounded runs fn and returns the bytes allocated meanwhile (by every
// goroutine, so callers run nothing in parallel). If fn runs longer than
// Timeout or allocates more than Alloc, a goroutine of its own panics,
// which ends the test binary at once (as go test -timeout does) instead
// of letting the runaway call exhaust the machine's memory; a panic in
// the test's goroutine would wait for test bookkeeping that the runaway
// call can starve.
func Bounded(what string, fn func()) uint64 {
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-done:
			runtime.ReadMemStats(&ms)
			return ms.TotalAlloc - before.TotalAlloc
		case <-deadline.C:
			abort(fmt.Sprintf("%s: still running after %v", what, Timeout))
		case <-tick.C:
			runtime.ReadMemStats(&ms)
			if n := ms.TotalAlloc - before.TotalAlloc; n > Alloc {
				abort(fmt.Sprintf("%s: allocated %d MB and still running", what, n>>20))
			}
		}
	}
}

// abort ends the test binary with msg.
func abort(msg string) {
	go func() { panic(msg) }()
	select {}
}

// NestMaps returns metadata depth levels deep, itself the first:
// {"a": {"a": ... {"a": 1}}}.
func NestMaps(depth int) map[string]any {
	m := map[string]any{"a": 1.0}
	for i := 1; i < depth; i++ {
		m = map[string]any{"a": m}
	}
	return m
}

// NestLists returns metadata depth levels deep: {"l": [[...[1]...]]}.
func NestLists(depth int) map[string]any {
	var v any = []any{1.0}
	for i := 2; i < depth; i++ {
		v = []any{v}
	}
	return map[string]any{"l": v}
}
