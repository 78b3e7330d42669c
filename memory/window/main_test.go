package window

import (
	"os"
	"testing"

	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestMain runs the package's tests on the backend MNEMO_MEMORY_BACKEND
// names (see package memtest): every memory a test opens with Open("")
// is then in PostgreSQL. With crashChildEnv set, the binary is instead
// TestCrashRecall's child process (see crash_test.go).
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(memtest.Main(m))
}
