//go:build race

package main

// raceEnabled: the race detector is on, which slows everything about
// tenfold; ranking tests, which check no concurrency, do less under it.
const raceEnabled = true
