package toolmem

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo/metrics"
)

// TestMetrics checks that the memory reports each embedding, and that
// Open gives Metrics and Logger to the database it opens: the backend's
// upserts and queries reach the same recorder.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	ops := map[string]int{}
	var embedded int
	var embedBytes int64
	rec := metrics.Func(func(e metrics.Event) {
		mu.Lock()
		defer mu.Unlock()
		ops[e.Op]++
		if e.Op == metrics.OpEmbed {
			embedded += e.Records
			embedBytes += e.Bytes
		}
	})
	var logs bytes.Buffer
	m, err := Open("", &Options{Metrics: rec, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const question = "how do I list files?"
	if _, err := m.Store(ctx, Entry{Question: question, ToolName: "ls"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Retrieve(ctx, "list files", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ops[metrics.OpEmbed] != 2 || embedded != 2 || embedBytes != int64(len(question)+len("list files")) {
		t.Errorf("%d embed events of %d texts, %d bytes; want 2 of 2, %d bytes", ops[metrics.OpEmbed], embedded, embedBytes, len(question)+len("list files"))
	}
	if ops[metrics.OpUpsert] != 1 || ops[metrics.OpQuery] < 1 {
		t.Errorf("the backend reported %d upserts and %d queries, want 1 and some (events %v)", ops[metrics.OpUpsert], ops[metrics.OpQuery], ops)
	}
	// On the engine (not under MNEMO_MEMORY_BACKEND=postgres), Pebble's
	// messages at Debug show that the Logger reached the database.
	if b := os.Getenv("MNEMO_MEMORY_BACKEND"); (b == "" || b == "engine") && !strings.Contains(logs.String(), "component=pebble") {
		t.Errorf("the database Open made logged nothing to Logger: %q", logs.String())
	}
}
