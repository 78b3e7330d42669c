//go:build race

package embed

// raceEnabled is true when the race detector is on: its instrumentation
// allocates on its own, so allocation counts mean nothing then.
const raceEnabled = true
