package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// hybridBench is a collection of benchN records of 128 dimensions, each
// with a synthetic sentence and a place in one of 1,000 conversations
// (mnemo.group "g<i%1000>", interleaved; mnemo.pos i, one global
// sequence), built once per process, with the query vectors and texts.
var hybridBench = sync.OnceValues(func() (*Collection, []mnemo.Query) {
	base, vecs := benchData()
	qtexts := benchQuestions(len(vecs), 8)
	c := textCollection(base, &Options{InMemory: true, CheckpointEvery: -1, NoSync: true}, func(i int) map[string]any {
		return map[string]any{"mnemo.group": fmt.Sprintf("g%d", i%1000), "mnemo.pos": i}
	})
	qs := make([]mnemo.Query, len(vecs))
	for i := range vecs {
		qs[i] = mnemo.Query{Vector: vecs[i], Text: qtexts[i], K: 10}
	}
	return c, qs
})

// hybridCostKinds are the query kinds BenchmarkHybridCost compares: the
// same vector and text asked vector-only, hybrid (default fusion), and
// hybrid with the memory adapters' default spreading.
var hybridCostKinds = []struct {
	name string
	set  func(*mnemo.Query)
}{
	{"vector", func(q *mnemo.Query) { q.Mode = mnemo.ModeVector }},
	{"hybrid", func(q *mnemo.Query) { q.Mode = mnemo.ModeHybrid }},
	{"spread", func(q *mnemo.Query) {
		q.Mode = mnemo.ModeHybrid
		q.Spread = &mnemo.Spread{Group: "mnemo.group", Position: "mnemo.pos", Weight: 0.5, Window: 2}
	}},
	// The same, with the text side run in line after the vector side
	// rather than beside it (textInLine).
	{"spread-inline", func(q *mnemo.Query) {
		q.Mode = mnemo.ModeHybrid
		q.Spread = &mnemo.Spread{Group: "mnemo.group", Position: "mnemo.pos", Weight: 0.5, Window: 2}
	}},
}

// BenchmarkHybridCost measures, in one run on one collection (see
// hybridBench), the latency of vector-only, hybrid, and hybrid with
// spreading queries (K 10), interleaved query by query in rotating order so
// that all three see the same machine, and reports each kind's p50 and p99
// and the p50 ratios to vector-only, and the same p50s and ratios in the
// thread's CPU time (on Linux), which other processes on a shared machine
// disturb less. An iteration runs every query of
// every kind once; the percentiles are over all iterations. At 100,000
// records:
//
//	MNEMO_ENGINE_N=100000 go test -run '^$' -bench HybridCost -benchtime 3x ./engine/
func BenchmarkHybridCost(b *testing.B) {
	c, queries := hybridBench()
	lat := make([][]time.Duration, len(hybridCostKinds))
	cpu := make([][]time.Duration, len(hybridCostKinds)) // thread CPU time, where the OS tells it
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, hasCPU := threadCPU()
	hits := make([]int, len(hybridCostKinds))
	neighbours := 0 // spread hits neither side found: neighbours lifted into the top K
	for b.Loop() {
		for i, q := range queries {
			for j := range hybridCostKinds {
				kind := (i + j) % len(hybridCostKinds)
				q := q
				hybridCostKinds[kind].set(&q)
				textInLine = hybridCostKinds[kind].name == "spread-inline"
				c0, _ := threadCPU()
				t0 := time.Now()
				res, err := c.Query(ctx, q)
				lat[kind] = append(lat[kind], time.Since(t0))
				textInLine = false
				if c1, _ := threadCPU(); hasCPU {
					cpu[kind] = append(cpu[kind], c1-c0)
				}
				if err != nil {
					b.Fatal(err)
				}
				hits[kind] += len(res)
				for _, h := range res {
					if h.VectorRank == 0 && h.TextRank == 0 {
						neighbours++
					}
				}
			}
		}
	}
	pct := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	p50 := make([]time.Duration, len(hybridCostKinds))
	for k, kind := range hybridCostKinds {
		p50[k] = pct(lat[k], 0.5)
		b.ReportMetric(float64(p50[k].Nanoseconds())/1e3, "us-p50-"+kind.name)
		b.ReportMetric(float64(pct(lat[k], 0.99).Nanoseconds())/1e3, "us-p99-"+kind.name)
		if hits[k] == 0 {
			b.Fatalf("%s queries found nothing", kind.name)
		}
	}
	b.ReportMetric(float64(p50[1])/float64(p50[0]), "hybrid/vector-p50")
	b.ReportMetric(float64(p50[2])/float64(p50[0]), "spread/vector-p50")
	b.ReportMetric(float64(p50[3])/float64(p50[0]), "spread-inline/vector-p50")
	if hasCPU { // the same on the thread's CPU time: steadier on a shared machine
		for k, kind := range hybridCostKinds {
			p50[k] = pct(cpu[k], 0.5)
			b.ReportMetric(float64(p50[k].Nanoseconds())/1e3, "us-cpu-p50-"+kind.name)
		}
		b.ReportMetric(float64(p50[1])/float64(p50[0]), "hybrid/vector-cpu-p50")
		b.ReportMetric(float64(p50[2])/float64(p50[0]), "spread/vector-cpu-p50")
	}
	b.ReportMetric(float64(neighbours)/float64(len(lat[2])), "neighbours/spread-query")
}
