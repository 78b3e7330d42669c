package bench

import (
	"os"
	"testing"

	"github.com/mnemodb/mnemo/index"
)

func TestQuickHarness(t *testing.T) {
	dir := os.Getenv("MNEMO_ANN_DIR")
	if dir == "" {
		t.Skip("MNEMO_ANN_DIR not set")
	}
	ds, err := LoadDir(dir, index.Cosine)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Run(ds, Config{Backends: []string{"hnsw", "flat"}, Threads: 1, Efs: []int{10, 40, 80}, Snapshot: true}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + Table(rows))
}
