//go:build !linux

package index

const hugePagesSupported = false

func adviseHugePages([]uint32) {}
