package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/metrics/expvarmetrics"
	"github.com/mnemodb/mnemo/postgres"
)

// TestMetrics checks that upserts, deletes and queries move the counters
// the metrics package documents, with the plans named in
// Collection.Query's events.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	m := new(expvar.Map)
	var mu sync.Mutex
	var last metrics.Event
	rec := metrics.Multi(expvarmetrics.New(m), metrics.Func(func(e metrics.Event) {
		mu.Lock()
		last = e
		mu.Unlock()
	}))
	s, err := postgres.Open(ctx, freshDSN(t), &postgres.Options{Metrics: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) string { return m.Get(name).String() }
	if _, err := c.Upsert(ctx,
		mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "red apple"},
		mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "green pear"},
		mnemo.Record{ID: "c", Vector: []float32{1, 1}, Content: "red pear"}); err != nil {
		t.Fatal(err)
	}
	if get("upserts") != "1" || get("upsert_records") != "3" || last.Op != metrics.OpUpsert || last.Collection != "c" || last.Bytes <= 0 || last.Duration <= 0 {
		t.Errorf("after an upsert of 3: upserts %s, records %s, event %+v", get("upserts"), get("upsert_records"), last)
	}
	filter, err := mnemo.NewFilter(map[string]any{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []mnemo.Query{
		{Vector: []float32{1, 0}, K: 2},
		{Vector: []float32{1, 0}, K: 2, Exact: true},
		{Vector: []float32{1, 0}, K: 2, Filter: filter}, // admits nothing: the exact retry
		{Text: "pear", K: 2},
		{Vector: []float32{1, 0}, Text: "pear", K: 2},
	} {
		hits, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if last.Op != metrics.OpQuery || last.Records != len(hits) {
			t.Errorf("query %+v: event %+v, %d hits", q, last, len(hits))
		}
	}
	var queries map[string]int
	if err := json.Unmarshal([]byte(get("queries")), &queries); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"vector/graph": 1, "vector/exact": 2, "text/text": 1, "hybrid/graph": 1}
	if len(queries) != len(want) {
		t.Errorf("queries %v, want %v", queries, want)
	}
	for k, n := range want {
		if queries[k] != n {
			t.Errorf("queries %v, want %v", queries, want)
			break
		}
	}
	if n, err := c.Delete(ctx, "a", "absent"); err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	if get("deletes") != "1" || get("delete_records") != "1" {
		t.Errorf("after a delete of 1: deletes %s, records %s", get("deletes"), get("delete_records"))
	}
	if _, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 2, 3}}); err == nil {
		t.Fatal("upsert of a 3-dimensional vector succeeded")
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: []float32{1}, K: 1}); err == nil {
		t.Fatal("query of a 1-dimensional vector succeeded")
	}
	if get("errors") != `{"query": 1, "upsert": 1}` || get("upserts") != "1" {
		t.Errorf("errors %s, upserts %s; want one upsert and one query error, upserts still 1", get("errors"), get("upserts"))
	}
}

// TestLoggerRetries checks that a call meeting connection errors logs
// each retry and the end, as structured records. It needs no server:
// nothing listens on the port.
func TestLoggerRetries(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewJSONHandler(&lockedWriter{&mu, &buf}, nil))
	_, err := postgres.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1", &postgres.Options{Logger: log, RetryTimeout: 200 * time.Millisecond})
	if !errors.Is(err, postgres.ErrUnavailable) {
		t.Fatalf("Open: %v, want ErrUnavailable", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var warns, errs int
	for line := range strings.Lines(buf.String()) {
		var r struct {
			Level, Msg, Err string
			Wait            float64 // nanoseconds
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		switch {
		case r.Level == "WARN" && r.Msg == "connection error: retrying" && r.Err != "" && r.Wait > 0:
			warns++
		case r.Level == "ERROR" && r.Msg == "server unavailable: giving up" && r.Err != "":
			errs++
		default:
			t.Errorf("unexpected record %q", line)
		}
	}
	if warns == 0 || errs != 1 {
		t.Errorf("%d retries and %d ends logged, want some and 1:\n%s", warns, errs, buf.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
