package retrieval

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

const (
	locomoDir    = "../../../shared/data/locomo-dev"
	cranfieldDir = "../../../shared/data/cranfield"
)

func loadLoCoMo(tb testing.TB) *LoCoMo {
	l, err := LoadLoCoMo(locomoDir)
	if errors.Is(err, ErrNoData) {
		tb.Skip("LoCoMo data not present")
	}
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func hashing(tb testing.TB, dim int) embed.Embedder {
	h, err := embed.NewHashing(dim)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// TestLoCoMoTable prints the retrieval table (go test -run LoCoMoTable -v).
func TestLoCoMoTable(t *testing.T) {
	if os.Getenv("MNEMO_RETRIEVAL") == "" {
		t.Skip("set MNEMO_RETRIEVAL=1 to print the table")
	}
	l := loadLoCoMo(t)
	h := hashing(t, 0)
	methods := []struct {
		name string
		m    EngineMethod
	}{
		{"engine BM25", EngineMethod{Mode: engine.ModeText}},
		{"engine BM25 k1 0.9 b 0.4", EngineMethod{Mode: engine.ModeText, BM25: &engine.BM25{K1: 0.9, B: 0.4}}},
		{"engine BM25 dated", EngineMethod{Mode: engine.ModeText, Content: DatedText}},
		{"engine vector", EngineMethod{Mode: engine.ModeVector, Embedder: h}},
		{"engine hybrid rrf", EngineMethod{Mode: engine.ModeHybrid, Embedder: h}},
		{"engine hybrid weighted", EngineMethod{Mode: engine.ModeHybrid, Embedder: h, Fusion: engine.Fusion{Method: engine.FusionWeighted}}},
	}
	var names []string
	var reports []LoCoMoReport
	for _, m := range []struct {
		name string
		m    RefBM25
	}{
		{"reference BM25, analyzer", RefBM25{K1: 1.2, B: 0.75}},
		{"reference BM25, plain words", RefBM25{K1: 1.2, B: 0.75, Tokens: PlainWords}},
	} {
		r, err := EvaluateLoCoMo(context.Background(), l, m.m.LoCoMo)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.name)
		reports = append(reports, r)
	}
	for _, m := range methods {
		r, err := EvaluateLoCoMo(context.Background(), l, m.m.LoCoMo)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.name)
		reports = append(reports, r)
	}
	for _, m := range []struct {
		name  string
		build func(context.Context, []Turn) (Index, error)
	}{
		{"toolmem SaveText/SearchText", ToolmemTexts},
		{"store.Semantic Add/SearchHits", SemanticFacts},
		{"chat.VectorMemory Add/Query", ChatVector},
	} {
		r, err := EvaluateLoCoMo(context.Background(), l, m.build)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.name)
		reports = append(reports, r)
	}
	var sb strings.Builder
	WriteTable(&sb, names, reports)
	t.Log("\n" + sb.String())
}
