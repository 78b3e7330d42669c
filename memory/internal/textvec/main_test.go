package textvec_test

import (
	"os"
	"testing"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestMain runs the package's tests on the backend MNEMO_MEMORY_BACKEND
// names (see package memtest).
func TestMain(m *testing.M) { os.Exit(memtest.Main(m)) }
