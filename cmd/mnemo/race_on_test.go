//go:build race

package main

// raceEnabled: the race detector is on, which slows everything about
// tenfold; ranking tests, which check no concurrency, do less under it.
const raceEnabled = true

// skipUnderRace skips a test that runs on one goroutine and spends its
// time on volume (sizes, recall, limits): the race detector has nothing
// to find there, and the run without it checks the test's assertions.
func skipUnderRace(t interface{ Skip(...any) }, what string) {
	t.Skip(what + ": one goroutine, no use for the race detector; the run without it covers this test")
}
