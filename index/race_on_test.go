//go:build race

package index

// raceEnabled is true when the race detector is on: it makes sync.Pool drop
// items at random and slows everything about tenfold.
const raceEnabled = true
