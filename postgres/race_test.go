//go:build race

package postgres_test

func init() { raceDetector = true }
