package expvarmetrics_test

import (
	"encoding/json"
	"errors"
	"expvar"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/metrics/expvarmetrics"
)

func TestRecord(t *testing.T) {
	rec := expvarmetrics.New(new(expvar.Map))
	rec.Record(metrics.Event{Op: metrics.OpUpsert, Records: 5, Duration: 3 * time.Microsecond})
	rec.Record(metrics.Event{Op: metrics.OpUpsert, Records: 2, Duration: time.Hour})
	rec.Record(metrics.Event{Op: metrics.OpUpsert, Records: 9, Err: errors.New("no")})
	rec.Record(metrics.Event{Op: metrics.OpQuery, Mode: "hybrid", Plan: "graph", Records: 3})
	rec.Record(metrics.Event{Op: metrics.OpCommit, Bytes: 100})
	rec.Record(metrics.Event{Op: metrics.OpCheckpoint, Bytes: 7, Err: errors.New("disk")})
	var got struct {
		Upserts       int64 `json:"upserts"`
		UpsertRecords int64 `json:"upsert_records"`
		UpsertSeconds struct {
			Count   uint64            `json:"count"`
			Sum     float64           `json:"sum"`
			Buckets map[string]uint64 `json:"buckets"`
		} `json:"upsert_seconds"`
		Queries         map[string]int64 `json:"queries"`
		Commits         int64            `json:"commits"`
		CommitBytes     int64            `json:"commit_bytes"`
		Checkpoints     int64            `json:"checkpoints"`
		CheckpointBytes int64            `json:"checkpoint_bytes"`
		Errors          map[string]int64 `json:"errors"`
	}
	if err := json.Unmarshal([]byte(rec.Map().String()), &got); err != nil {
		t.Fatalf("%v in %s", err, rec.Map())
	}
	h := got.UpsertSeconds
	if got.Upserts != 2 || got.UpsertRecords != 7 || h.Count != 2 {
		t.Errorf("upserts %d, records %d, observed %d; want 2, 7, 2", got.Upserts, got.UpsertRecords, h.Count)
	}
	if want := (time.Hour + 3*time.Microsecond).Seconds(); h.Sum != want {
		t.Errorf("upsert_seconds sum %v, want %v", h.Sum, want)
	}
	if h.Buckets["1e-06"] != 0 || h.Buckets["4e-06"] != 1 || h.Buckets["16.777216"] != 1 || h.Buckets["+Inf"] != 2 || len(h.Buckets) != 14 {
		t.Errorf("buckets %v", h.Buckets)
	}
	if got.Queries["hybrid/graph"] != 1 || len(got.Queries) != 1 {
		t.Errorf("queries %v", got.Queries)
	}
	if got.Commits != 1 || got.CommitBytes != 100 || got.Checkpoints != 0 || got.CheckpointBytes != 0 {
		t.Errorf("commits %d (%d bytes), checkpoints %d (%d bytes)", got.Commits, got.CommitBytes, got.Checkpoints, got.CheckpointBytes)
	}
	if got.Errors["upsert"] != 1 || got.Errors["checkpoint"] != 1 || len(got.Errors) != 2 {
		t.Errorf("errors %v", got.Errors)
	}
}

func TestHistogramBounds(t *testing.T) {
	var h expvarmetrics.Histogram
	for _, b := range expvarmetrics.Bounds {
		h.Observe(b) // at the bound: in its bucket
	}
	for i, n := range h.Buckets()[:len(expvarmetrics.Bounds)] {
		if n != uint64(i+1) {
			t.Fatalf("bucket %d counts %d, want %d: %v", i, n, i+1, h.Buckets())
		}
	}
}

func TestRecordAllocs(t *testing.T) {
	rec := expvarmetrics.New(new(expvar.Map))
	q := metrics.Event{Op: metrics.OpQuery, Mode: "vector", Plan: "graph", Duration: time.Millisecond}
	rec.Record(q)
	for _, e := range []metrics.Event{q, {Op: metrics.OpUpsert, Records: 3}, {Op: metrics.OpCommit, Bytes: 10}} {
		if n := testing.AllocsPerRun(100, func() { rec.Record(e) }); n != 0 {
			t.Errorf("Record(%s) allocates %v times", e.Op, n)
		}
	}
}

// BenchmarkRecord is the recorder's own cost per event, to set beside
// an operation's (BenchmarkMetricsAB in engine): a query event (a
// read-locked map lookup, two atomic adds and a histogram bucket) and an
// upsert event, from every CPU at once.
func BenchmarkRecord(b *testing.B) {
	rec := expvarmetrics.New(new(expvar.Map))
	for _, e := range []metrics.Event{
		{Op: metrics.OpQuery, Mode: "hybrid", Plan: "graph", Records: 10, Duration: 300 * time.Microsecond},
		{Op: metrics.OpUpsert, Records: 1, Bytes: 700, Duration: 200 * time.Microsecond},
	} {
		b.Run(e.Op, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rec.Record(e)
				}
			})
		})
	}
}
