//go:build !linux

package index

func hugePagesOn() bool { return false }

func adviseHugePages([]uint32) {}
