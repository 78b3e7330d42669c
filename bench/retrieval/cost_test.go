package retrieval

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/store"
)

// BenchmarkDefaultPathCost measures what the fact store's default path
// costs against a search by the embedding alone, at the size users
// reach: MNEMO_COST_N facts (default 20,000; 100,000 by hand) made of
// LoCoMo's turns, copy i of the set in sessions of its own ("c<i>/" and
// the conversation), so that every conversation is a session. Three
// handles on one collection ask LoCoMo's questions in turn, query by
// query, so that all three see the same machine: vector only, hybrid
// without spreading, and the default (hybrid, spreading within the
// session). It reports each p50 and p99 and the p50 ratios to vector
// only:
//
//	MNEMO_COST_N=100000 go test -run '^$' -bench DefaultPathCost -benchtime 1x -timeout 30m ./bench/retrieval/
func BenchmarkDefaultPathCost(b *testing.B) {
	l := loadLoCoMo(b)
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_COST_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	db, err := engine.Open("", &engine.Options{InMemory: true, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	open := func(o store.SemanticOptions) *store.Semantic {
		o.SweepEvery = -1
		s, err := store.NewSemantic(ctx, db.Store(), &o)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	def := open(store.SemanticOptions{})
	defer def.Close()
	var all []Turn
	for _, c := range l.Convs {
		all = append(all, l.Turns[c]...)
	}
	for i := range n {
		t := all[i%len(all)]
		session := fmt.Sprintf("c%d/%s", i/len(all), t.Conv)
		if _, err := def.AddWith(ctx, SpeakerText(t), &store.AddOptions{Session: session, Position: new(int64(t.Position))}); err != nil {
			b.Fatal(err)
		}
	}
	kinds := []struct {
		name string
		s    *store.Semantic
	}{
		{"vector", open(store.SemanticOptions{Mode: mnemo.ModeVector})},
		{"hybrid", open(store.SemanticOptions{Spread: new(float32(0))})},
		{"default", def},
	}
	took := make([][]time.Duration, len(kinds))
	b.ResetTimer()
	for b.Loop() {
		for qi, q := range l.Questions {
			for j := range kinds {
				k := (qi + j) % len(kinds) // rotate who goes first
				t0 := time.Now()
				if _, err := kinds[k].s.SearchHits(ctx, q.Text, 10); err != nil {
					b.Fatal(err)
				}
				took[k] = append(took[k], time.Since(t0))
			}
		}
	}
	b.StopTimer()
	p := func(d []time.Duration, q float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Microseconds())
	}
	for k, kind := range kinds {
		b.ReportMetric(p(took[k], 0.5), "us-p50-"+kind.name)
		b.ReportMetric(p(took[k], 0.99), "us-p99-"+kind.name)
	}
	b.ReportMetric(p(took[1], 0.5)/p(took[0], 0.5), "hybrid/vector-p50")
	b.ReportMetric(p(took[2], 0.5)/p(took[0], 0.5), "default/vector-p50")
}
