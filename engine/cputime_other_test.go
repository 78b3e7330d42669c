//go:build !linux

package engine

import "time"

// threadCPU reports no thread CPU time outside Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
