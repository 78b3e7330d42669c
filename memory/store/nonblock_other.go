//go:build !unix

package store

// openNonblock is zero where opening a file never waits for a peer.
const openNonblock = 0
