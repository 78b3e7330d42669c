package toolmem

import (
	"context"
	"os"
	"testing"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestMain runs the package's tests on the backend MNEMO_MEMORY_BACKEND
// names (see package memtest): every memory a test opens with Open("")
// is then in PostgreSQL.
func TestMain(m *testing.M) { os.Exit(memtest.Main(m)) }

// count is m.Count, failing the test on an error.
func count(t *testing.T, m *Memory) int {
	t.Helper()
	n, err := m.Count(context.Background())
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	return n
}
