package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"expvar"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/metrics/expvarmetrics"
)

// BenchmarkMetricsAB measures what the metrics hook costs: each
// operation runs on one collection alternately with Options.Metrics nil
// (A) and with an expvarmetrics recorder (B), switching every 32
// operations, so that both halves see the same machine. It reports each
// half's CPU time of the benchmark's own thread per operation
// (cpu-ns/op-nil and cpu-ns/op-expvar, Linux: other processes on a
// shared machine disturb it less than wall time), the same in wall time
// (ns/op-nil, ns/op-expvar), and B's overhead over A in percent of CPU
// time (cpu-overhead-%) and of wall time (overhead-%). Run it as
//
//	go test -run '^$' -bench BenchmarkMetricsAB -count 10 ./engine | benchstat -
//
// for the medians and their spread. The upserts write one record with
// NoSync (an fsync would hide any difference); the queries are on 5,000
// records of 128 dimensions with a short text each: exact (no Ef, a
// collection this small is scanned), graph (Ef 64) and hybrid.
func BenchmarkMetricsAB(b *testing.B) {
	ctx := context.Background()
	db, err := Open("", &Options{InMemory: true, NoSync: true, CheckpointEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n, dim = 5000, 128
	vecs := benchVectors(n+500, dim, 3)
	texts := benchSentences(n, 4)
	qtexts := benchQuestions(500, 5)
	c, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: dim})
	if err != nil {
		b.Fatal(err)
	}
	for start := 0; start < n; start += 500 {
		recs := make([]mnemo.Record, 0, 500)
		for i := start; i < start+500; i++ {
			recs = append(recs, mnemo.Record{ID: strconv.Itoa(i), Vector: vecs[i], Content: texts[i]})
		}
		if _, err := c.Upsert(ctx, recs...); err != nil {
			b.Fatal(err)
		}
	}
	queries := vecs[n:]
	ops := []struct {
		name string
		do   func(i int) error
	}{
		{"upsert", func(i int) error {
			_, err := c.Upsert(ctx, mnemo.Record{ID: strconv.Itoa(i % n), Vector: vecs[(i+1)%n], Content: texts[i%n]})
			return err
		}},
		{"exact", func(i int) error {
			_, err := c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], K: 10})
			return err
		}},
		{"graph", func(i int) error {
			_, err := c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], K: 10, Ef: 64})
			return err
		}},
		{"hybrid", func(i int) error {
			_, err := c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], Text: qtexts[i%len(qtexts)], K: 10, Ef: 64})
			return err
		}},
	}
	rec := expvarmetrics.New(new(expvar.Map))
	const chunk = 32
	for _, op := range ops {
		b.Run("op="+op.name, func(b *testing.B) {
			defer func() { db.rec = nil }()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			var cpu, wall [2]time.Duration
			var n [2]int
			_, hasCPU := threadCPU()
			i := 0
			for b.Loop() {
				if i%chunk == 0 {
					// No operation is in flight here, and the background
					// checkpointer is off: nothing else reads db.rec.
					side := i / chunk % 2
					db.rec = [2]metrics.Recorder{nil, rec}[side]
					c0, _ := threadCPU()
					w0 := time.Now()
					for j := 0; j < chunk; j++ {
						if err := op.do(i + j); err != nil {
							b.Fatal(err)
						}
					}
					wall[side] += time.Since(w0)
					c1, _ := threadCPU()
					cpu[side] += c1 - c0
					n[side] += chunk
				}
				i++
			}
			if n[0] == 0 || n[1] == 0 {
				return // too few iterations for both sides
			}
			per := func(d time.Duration, side int) float64 { return float64(d) / float64(n[side]) }
			b.ReportMetric(per(wall[0], 0), "ns/op-nil")
			b.ReportMetric(per(wall[1], 1), "ns/op-expvar")
			b.ReportMetric(100*(per(wall[1], 1)/per(wall[0], 0)-1), "overhead-%")
			if hasCPU {
				b.ReportMetric(per(cpu[0], 0), "cpu-ns/op-nil")
				b.ReportMetric(per(cpu[1], 1), "cpu-ns/op-expvar")
				b.ReportMetric(100*(per(cpu[1], 1)/per(cpu[0], 0)-1), "cpu-overhead-%")
			}
		})
	}
}
