//go:build !windows

package coderhnsw

import "github.com/mnemodb/mnemo/internal/vectest"

// The shared generators, under the names these tests use.
var (
	clustered = vectest.Clustered
	newRand   = vectest.NewRand
)
