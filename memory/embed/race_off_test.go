//go:build !race

package embed

// raceEnabled is true when the race detector is on (see race_on_test.go).
const raceEnabled = false
