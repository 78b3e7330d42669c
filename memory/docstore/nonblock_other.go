//go:build !unix

package docstore

// openNonblock is zero where opening a file never waits for a peer.
const openNonblock = 0
