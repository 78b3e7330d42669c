//go:build !windows

package coderhnsw_test

import (
	"bytes"
	"fmt"

	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/index/coderhnsw"
)

func Example() {
	c, err := coderhnsw.New(2, index.L2, nil) // nil options: M=16, EfSearch=64
	if err != nil {
		panic(err)
	}
	for key, v := range map[uint64][]float32{1: {0, 0}, 2: {1, 0}, 3: {0, 1}, 4: {5, 5}} {
		if err := c.Add(key, v); err != nil {
			panic(err)
		}
	}
	// A snapshot of this backend is read back with coderhnsw.Read, which
	// rebuilds the graph; index.Read does not know the format.
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		panic(err)
	}
	back, err := coderhnsw.Read(&buf)
	if err != nil {
		panic(err)
	}
	res, err := back.Search(nil, []float32{0.9, 0.1}, 2, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Printf("key %d at squared distance %.2f\n", r.Key, r.Distance)
	}
	// Output:
	// key 2 at squared distance 0.02
	// key 1 at squared distance 0.82
}
