package otelmnemo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	otelmnemo "github.com/mnemodb/mnemo/integrations/otel"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/postgres"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// points collects every data point of reader by instrument name and
// attribute set: sums' values, histograms' counts.
func points(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = map[string]float64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name][p.Attributes.Encoded(attribute.DefaultEncoder())] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name][p.Attributes.Encoded(attribute.DefaultEncoder())] = float64(p.Count)
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

// run drives s through an upsert of 3 records, a vector and a text
// query, a delete of 1 and a failed upsert.
func run(t *testing.T, s mnemo.Store, name string) {
	t.Helper()
	ctx := context.Background()
	c, err := s.CreateCollection(ctx, name, mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx,
		mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "red apple"},
		mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "green pear"},
		mnemo.Record{ID: "c", Vector: []float32{1, 1}, Content: "red pear"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 0}, K: 2, Exact: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, mnemo.Query{Text: "pear", K: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 2, 3}}); !errors.Is(err, mnemo.ErrDimension) {
		t.Fatalf("upsert of a 3-dimensional vector: %v, want ErrDimension", err)
	}
}

// check opens a store with open and an otelmnemo Recorder, runs run on
// collection name, and checks what the Recorder reported.
func check(t *testing.T, name string, open func(metrics.Recorder) mnemo.Store) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	rec, err := otelmnemo.New(&otelmnemo.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
	})
	if err != nil {
		t.Fatal(err)
	}
	s := open(rec)
	defer s.Close()
	run(t, s, name)
	got := points(t, reader)
	var (
		upsert = "mnemo.collection=" + name + ",mnemo.op=upsert"
		failed = "error.type=mnemo: dimension mismatch,mnemo.collection=" + name + ",mnemo.op=upsert"
		text   = "mnemo.collection=" + name + ",mnemo.op=query,mnemo.query.mode=text,mnemo.query.plan=text"
		exact  = "mnemo.collection=" + name + ",mnemo.op=query,mnemo.query.mode=vector,mnemo.query.plan=exact"
		del    = "mnemo.collection=" + name + ",mnemo.op=delete"
	)
	for _, w := range []struct {
		name, attrs string
		want        float64
	}{
		{"mnemo.operations", upsert, 1},
		{"mnemo.operations", failed, 1},
		{"mnemo.operations", text, 1},
		{"mnemo.operations", exact, 1},
		{"mnemo.operations", del, 1},
		{"mnemo.operation.duration", upsert, 1},
		{"mnemo.operation.duration", exact, 1},
		{"mnemo.operation.records", upsert, 3},
		{"mnemo.operation.records", exact, 2},
		{"mnemo.operation.records", text, 2},
		{"mnemo.operation.records", del, 1},
	} {
		if v := got[w.name][w.attrs]; v != w.want {
			t.Errorf("%s{%s} = %v, want %v (all: %v)", w.name, w.attrs, v, w.want, got[w.name])
		}
	}
	if got["mnemo.operation.bytes"][upsert] <= 0 {
		t.Errorf("mnemo.operation.bytes{%s} = %v", upsert, got["mnemo.operation.bytes"])
	}
	var sawFailed, sawQuery bool
	for _, s := range spans.Ended() {
		switch {
		case s.Name() == "mnemo.upsert" && s.Status().Code == codes.Error:
			sawFailed = true
		case s.Name() == "mnemo.query" && s.EndTime().After(s.StartTime()):
			sawQuery = true
		}
	}
	if !sawFailed || !sawQuery {
		t.Errorf("spans: a failed upsert %v, a query with a duration %v; %d spans", sawFailed, sawQuery, len(spans.Ended()))
	}
}

func TestEngine(t *testing.T) {
	check(t, "notes", func(rec metrics.Recorder) mnemo.Store {
		s, err := engine.OpenStore("", &engine.Options{InMemory: true, Metrics: rec})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestPostgres runs on the server MNEMO_PG_DSN names (in a schema of its
// own); without one it is skipped, or fails under CI=true.
func TestPostgres(t *testing.T) {
	dsn := os.Getenv("MNEMO_PG_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MNEMO_PG_DSN is not set under CI=true")
		}
		t.Skip("MNEMO_PG_DSN is not set (a PostgreSQL server with pgvector)")
	}
	// A schema of its own, dropped at the end, leaves the server as it
	// was (the mnemo tables of its public schema would be found through
	// other tests' search paths).
	ctx := context.Background()
	schemas := pgtest.NewSchemas(dsn)
	t.Cleanup(func() {
		if err := schemas.Drop(ctx); err != nil {
			t.Error(err)
		}
	})
	check(t, "notes", func(rec metrics.Recorder) mnemo.Store {
		sdsn, err := schemas.New(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s, err := postgres.Open(ctx, sdsn, &postgres.Options{Metrics: rec})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestErrorType(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("upsert: %w", mnemo.ErrDimension), "mnemo: dimension mismatch"},
		{context.Canceled, "context canceled"},
		{errors.New("disk on fire"), "_OTHER"},
	} {
		if got := otelmnemo.ErrorType(c.err); got != c.want {
			t.Errorf("ErrorType(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
