//go:build !windows

package bench

import (
	"io"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/index/coderhnsw"
)

// newCoder returns an empty index of the "coder" backend: a wrapper of
// github.com/coder/hnsw, linked only by this package and the CLI.
func newCoder(dim int, metric index.Metric, c *Config) (index.Index, error) {
	idx, err := coderhnsw.New(dim, metric, &coderhnsw.Options{M: c.M})
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// readCoder restores a snapshot of the "coder" backend.
func readCoder(r io.Reader) (index.Index, error) {
	idx, err := coderhnsw.Read(r)
	if err != nil {
		return nil, err
	}
	return idx, nil
}
