package window

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/metrics"
)

// flakyEmbedder is the offline embedder, failing while fail is set.
type flakyEmbedder struct {
	embed.Embedder
	fail atomic.Bool
}

func (f *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.fail.Load() {
		return nil, errors.New("embedder down")
	}
	return f.Embedder.Embed(ctx, texts)
}

// TestLoggerRepair checks that a recall index the window could not
// update (its embedder failing) is logged as left to repair, that the
// failed embedding is an embed event with its error, and that a later
// call repairs it without a warning.
func TestLoggerRepair(t *testing.T) {
	ctx := context.Background()
	h, err := embed.NewHashing(0)
	if err != nil {
		t.Fatal(err)
	}
	emb := &flakyEmbedder{Embedder: h}
	var logs bytes.Buffer
	var embeds, failed atomic.Int64
	rec := metrics.Func(func(e metrics.Event) {
		if e.Op == metrics.OpEmbed {
			embeds.Add(1)
			if e.Err != nil {
				failed.Add(1)
			}
		}
	})
	w, err := New(1000, &Options{Recall: true, Embedder: emb, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	emb.fail.Store(true)
	if err := w.Record(ctx, Message{Role: User, Content: "where are the keys?"}); err != nil {
		t.Fatalf("Record with the embedder down: %v (the message is stored, the index repaired later)", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "recall index not repaired") || !strings.Contains(logs.String(), "embedder down") {
		t.Fatalf("log %q", logs.String())
	}
	if failed.Load() == 0 {
		t.Errorf("no failed embed event among %d", embeds.Load())
	}
	emb.fail.Store(false)
	logs.Reset()
	if err := w.Record(ctx, Message{Role: User, Content: "on the hook"}); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("log after the embedder came back: %q", logs.String())
	}
}
