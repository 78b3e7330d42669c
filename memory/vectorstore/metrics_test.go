package vectorstore

import (
	"context"
	"sync"
	"testing"

	"github.com/mnemodb/mnemo/metrics"
)

// TestMetricsEmbedBatches checks that each Embed call, one per batch, is
// an embed event naming the collection and counting its texts.
func TestMetricsEmbedBatches(t *testing.T) {
	var mu sync.Mutex
	var batches []int
	rec := metrics.Func(func(e metrics.Event) {
		if e.Op != metrics.OpEmbed {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if e.Collection != "docs" || e.Err != nil || e.Bytes != int64(e.Records)*int64(len("text number x")) {
			t.Errorf("embed event %+v", e)
		}
		batches = append(batches, e.Records)
	})
	s, err := Open("", &Options{Collection: "docs", BatchSize: 2, Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	docs := make([]Doc, 5)
	for i := range docs {
		docs[i] = Doc{Text: "text number " + string(rune('a'+i))}
	}
	if _, err := s.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 3 || batches[0] != 2 || batches[1] != 2 || batches[2] != 1 {
		t.Errorf("embed events of %v texts, want [2 2 1]", batches)
	}
}
