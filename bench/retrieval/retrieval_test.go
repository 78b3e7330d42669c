package retrieval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

// The data sets, relative to this package's directory.
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

func loadCranfield(tb testing.TB) *Cranfield {
	c, err := LoadCranfield(cranfieldDir)
	if errors.Is(err, ErrNoData) {
		tb.Skip("Cranfield data not present")
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

type method struct {
	name      string
	locomo    func(context.Context, []Turn) (Index, error)
	cranfield func(context.Context, []string, []string) (Index, error) // nil: not a document store
}

// methods are the rows of the retrieval table.
func methods() []method {
	h, err := embed.NewHashing(0)
	if err != nil {
		panic(err)
	}
	nb := &mnemo.Spread{Group: "session", Position: "position", Weight: 0.5, Window: 2}
	eng := func(name string, m EngineMethod) method { return method{name, m.LoCoMo, m.Cranfield} }
	ref := RefBM25{K1: mnemo.DefaultBM25K1, B: mnemo.DefaultBM25B}
	return []method{
		{"reference BM25 (k1 1.2, b 0.75, the analyzer)", ref.LoCoMo, ref.Cranfield},
		eng("engine text (BM25)", EngineMethod{Mode: mnemo.ModeText}),
		eng("engine vector (hashing/v2/1024)", EngineMethod{Mode: mnemo.ModeVector, Embedder: h}),
		eng("engine hybrid, defaults (weighted, vector 0.3)", EngineMethod{Mode: mnemo.ModeHybrid, Embedder: h}),
		eng("engine hybrid, reciprocal rank (k 60, equal weights)", EngineMethod{Mode: mnemo.ModeHybrid, Embedder: h, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF, VectorWeight: 0.5}}),
		eng("engine text + session date as a field", EngineMethod{Mode: mnemo.ModeText, Fields: []string{"date"}}),
		eng("engine text + neighbours (0.5, ±2 turns of the session)", EngineMethod{Mode: mnemo.ModeText, Spread: nb}),
		eng("engine hybrid + neighbours", EngineMethod{Mode: mnemo.ModeHybrid, Embedder: h, Spread: nb}),
		eng("engine hybrid + neighbours + date field", EngineMethod{Mode: mnemo.ModeHybrid, Embedder: h, Spread: nb, Fields: []string{"date"}}),
		{"toolmem SaveText / SearchText (defaults, TopK 10)", ToolmemTexts, nil},
		{"store.Semantic AddWith in the session / SearchHits (defaults)", SemanticFacts, nil},
		{"store.Semantic Add / SearchHits (defaults)", nil, SemanticDocs},
		{"chat.VectorMemory Add / Query (defaults, K 10)", ChatVector, nil},
		{"store.Semantic, spreading off", nil, SemanticDocsNoSpread},
	}
}

// BenchmarkLoCoMo measures evidence recall on LoCoMo conversations for
// every method; -v prints the table:
//
//	go test -run '^$' -bench LoCoMo -benchtime 1x -v ./bench/retrieval/
func BenchmarkLoCoMo(b *testing.B) {
	l := loadLoCoMo(b)
	var names []string
	var reports []LoCoMoReport
	for _, m := range methods() {
		if m.locomo == nil {
			continue
		}
		b.Run(m.name, func(b *testing.B) {
			var r LoCoMoReport
			for b.Loop() {
				var err error
				if r, err = EvaluateLoCoMo(context.Background(), l, m.locomo); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.Overall.Recall10, "recall@10")
			b.ReportMetric(r.Overall.Recall5, "recall@5")
			b.ReportMetric(r.Overall.MRR, "MRR")
			b.ReportMetric(r.Answered, "answered")
			names = append(names, m.name)
			reports = append(reports, r)
		})
	}
	var sb strings.Builder
	WriteTable(&sb, names, reports)
	b.Log("\n" + sb.String())
}

// BenchmarkCranfield measures nDCG@10 on Cranfield for the methods that
// store documents:
//
//	go test -run '^$' -bench Cranfield -benchtime 1x -v ./bench/retrieval/
func BenchmarkCranfield(b *testing.B) {
	c := loadCranfield(b)
	var lines []string
	for _, m := range methods() {
		if m.cranfield == nil {
			continue
		}
		b.Run(m.name, func(b *testing.B) {
			var nd float64
			for b.Loop() {
				var err error
				if nd, err = EvaluateCranfield(context.Background(), c, m.cranfield); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(nd, "nDCG@10")
			lines = append(lines, "| "+m.name+" | "+f3(nd)+" |")
		})
	}
	b.Log("\n| method | nDCG@10 |\n|---|---|\n" + strings.Join(lines, "\n"))
}

// TestEngineMatchesReference: the engine's BM25 ranks LoCoMo turns exactly
// as the reference implementation does (the same analyzer, the same
// formula), question by question.
func TestEngineMatchesReference(t *testing.T) {
	l := loadLoCoMo(t)
	ctx := context.Background()
	ref := RefBM25{K1: mnemo.DefaultBM25K1, B: mnemo.DefaultBM25B}
	eng := EngineMethod{Mode: mnemo.ModeText}
	conv := l.Convs[0]
	a, _ := ref.LoCoMo(ctx, l.Turns[conv])
	b, err := eng.LoCoMo(ctx, l.Turns[conv])
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	differ := 0
	for _, q := range l.Questions {
		if q.Conv != conv {
			continue
		}
		x, _ := a.Search(ctx, q.Text, 10)
		y, err := b.Search(ctx, q.Text, 10)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(x, " ") != strings.Join(y, " ") {
			differ++ // ties may order differently; count them
		}
	}
	if differ > 2 {
		t.Fatalf("%d questions rank differently", differ)
	}
}

// BenchmarkLayouts measures the memory adapters' default path with
// neighbour spreading on and off in every layout (Layouts) on LoCoMo;
// -v prints the table:
//
//	go test -run '^$' -bench Layouts -benchtime 1x -v ./bench/retrieval/
//
// MNEMO_BENCH_EMBEDDER chooses the embedder (see Embedder).
func BenchmarkLayouts(b *testing.B) {
	l := loadLoCoMo(b)
	var sb strings.Builder
	sb.WriteString("| layout | adapter | default | spreading off |\n|---|---|---|---|\n")
	for _, layout := range Layouts() {
		for _, a := range Adapters() {
			var on, off LoCoMoReport
			b.Run(layout.Name+"/"+a.Name, func(b *testing.B) {
				for b.Loop() {
					var err error
					if on, err = EvaluateLayout(context.Background(), l, layout, a, true); err != nil {
						b.Fatal(err)
					}
					if off, err = EvaluateLayout(context.Background(), l, layout, a, false); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(on.Overall.Recall10, "recall@10")
				b.ReportMetric(off.Overall.Recall10, "off-recall@10")
			})
			fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", layout.Name, a.Name, f3(on.Overall.Recall10), f3(off.Overall.Recall10))
		}
	}
	b.Log("\n" + sb.String())
}

// TestSpreadingNeverHurts: on two LoCoMo conversations, in every layout
// where the memories carry their structure (a session, and positions
// when they are stored out of order), the fact store's default path
// (neighbour spreading on) finds at least as much evidence as with
// spreading off, and clearly more when the conversation is in order.
func TestSpreadingNeverHurts(t *testing.T) {
	if raceEnabled {
		t.Skip("a ranking test; slow under the race detector")
	}
	l := loadLoCoMo(t)
	l.Convs = l.Convs[:2]
	a := Adapters()[0]
	for _, layout := range Layouts() {
		if !layout.Sessions && !layout.Scopes {
			continue
		}
		if strings.Contains(layout.Name, "random") && !layout.Positions {
			continue // no structure given: see the benchmark
		}
		on, err := EvaluateLayout(context.Background(), l, layout, a, true)
		if err != nil {
			t.Fatal(err)
		}
		off, err := EvaluateLayout(context.Background(), l, layout, a, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.3f, spreading off %.3f", layout.Name, on.Overall.Recall10, off.Overall.Recall10)
		if on.Overall.Recall10 < off.Overall.Recall10 {
			t.Errorf("%s: recall@10 %.3f with spreading, %.3f without", layout.Name, on.Overall.Recall10, off.Overall.Recall10)
		}
		if layout.Sessions && !strings.Contains(layout.Name, "random") && on.Overall.Recall10 < off.Overall.Recall10+0.05 {
			t.Errorf("%s: spreading lifts recall@10 only from %.3f to %.3f", layout.Name, off.Overall.Recall10, on.Overall.Recall10)
		}
	}
}
