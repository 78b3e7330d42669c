//go:build race

package retrieval

// raceEnabled: the race detector slows the quality tests past their use;
// they assert rankings, not concurrency.
const raceEnabled = true
