package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"expvar"
	"runtime"
	"strconv"
	"testing"

	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/metrics/expvarmetrics"
)

// BenchmarkMetricsAB measures what the metrics hook costs: each
// operation runs on one collection with Options.Metrics nil (rec=nil)
// and with an expvarmetrics recorder (rec=expvar), one after the other
// in the same run, so that
//
//	go test -run '^$' -bench BenchmarkMetricsAB -count 10 ./engine | benchstat -col /rec -
//
// prints the ratio. Besides ns/op it reports cpu-ns/op, the CPU time of
// the benchmark's own thread (Linux), which other processes on a shared
// machine disturb less than wall time. The upserts write one record
// with NoSync (an fsync would hide any difference); the queries are on
// 5,000 records of 128 dimensions with a short text each: exact (no Ef,
// a collection this small is scanned), graph (Ef 64) and hybrid.
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
	recorders := []struct {
		name string
		rec  metrics.Recorder
	}{
		{"nil", nil},
		{"expvar", expvarmetrics.New(new(expvar.Map))},
	}
	for _, op := range ops {
		for _, r := range recorders {
			b.Run("op="+op.name+"/rec="+r.name, func(b *testing.B) {
				db.rec = r.rec // no operation is in flight between sub-benchmarks
				defer func() { db.rec = nil }()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				cpu0, ok := threadCPU()
				i := 0
				for b.Loop() {
					if err := op.do(i); err != nil {
						b.Fatal(err)
					}
					i++
				}
				if cpu1, ok1 := threadCPU(); ok && ok1 && i > 0 {
					b.ReportMetric(float64(cpu1-cpu0)/float64(i), "cpu-ns/op")
				}
			})
		}
	}
}
