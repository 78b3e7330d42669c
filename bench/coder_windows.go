package bench

import (
	"fmt"
	"io"

	"github.com/mnemodb/mnemo/index"
)

// errNoCoder is why the "coder" backend is missing on windows: package
// index/coderhnsw is not built there, because github.com/coder/hnsw v0.6.1
// depends on github.com/google/renameio v1, which has no windows
// implementation.
var errNoCoder = fmt.Errorf("%w: coder (github.com/coder/hnsw does not build on windows)", ErrUnavailable)

func newCoder(int, index.Metric, *Config) (index.Index, error) { return nil, errNoCoder }

func readCoder(io.Reader) (index.Index, error) { return nil, errNoCoder }
