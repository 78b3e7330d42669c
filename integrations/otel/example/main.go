// Command example reports a small agent memory's work to OpenTelemetry:
// it stores notes, recalls some, and prints what the mnemo instruments
// collected (operations, records, bytes and durations by operation) and
// the spans recorded. The SDK's manual reader and an in-memory span
// recorder stand in for an exporter (OTLP, Prometheus), so it runs
// without a collector:
//
//	go run ./example                  # an embedded database in memory
//	go run ./example -db DIR          # on disk
//	go run ./example -pg postgres://  # in PostgreSQL with pgvector
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	otelmnemo "github.com/mnemodb/mnemo/integrations/otel"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/postgres"
)

func main() {
	dir := flag.String("db", "", "an engine database directory (default: in memory)")
	dsn := flag.String("pg", "", "a PostgreSQL URL (pgvector) instead of the engine")
	flag.Parse()
	ctx := context.Background()

	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	rec, err := otelmnemo.New(&otelmnemo.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
	})
	if err != nil {
		log.Fatal(err)
	}
	s, err := open(ctx, *dir, *dsn, rec)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if err := work(ctx, s); err != nil {
		log.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Printf("%s (%s)\n", m.Name, m.Unit)
			var lines []string
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("  %-60s %d", p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("  %-60s count %d, sum %.6fs", p.Attributes.Encoded(attribute.DefaultEncoder()), p.Count, p.Sum))
				}
			}
			sort.Strings(lines)
			fmt.Println(strings.Join(lines, "\n"))
		}
	}
	fmt.Printf("%d spans, the last: %s\n", len(spans.Ended()), spans.Ended()[len(spans.Ended())-1].Name())
}

// open opens the store the flags name, with rec as its metrics hook.
func open(ctx context.Context, dir, dsn string, rec metrics.Recorder) (mnemo.Store, error) {
	if dsn != "" {
		return postgres.Open(ctx, dsn, &postgres.Options{Metrics: rec})
	}
	return engine.OpenStore(dir, &engine.Options{InMemory: dir == "", Metrics: rec})
}

// work stores a few notes and recalls from them: vector, text and hybrid.
func work(ctx context.Context, s mnemo.Store) error {
	emb, err := embed.NewHashing(64)
	if err != nil {
		return err
	}
	const name = "otel_example_notes"
	s.DropCollection(ctx, name) // from an earlier run on the same database
	defer s.DropCollection(ctx, name)
	c, err := s.CreateCollection(ctx, name, mnemo.CollectionConfig{Dimension: emb.Dimension()})
	if err != nil {
		return err
	}
	notes := []string{
		"Paul works at Google as an engineer.",
		"Anna runs a bakery in Lyon.",
		"The team meeting moved to Thursday at 10.",
		"The office wifi password is on the fridge.",
	}
	vecs, err := emb.Embed(ctx, notes)
	if err != nil {
		return err
	}
	recs := make([]mnemo.Record, len(notes))
	for i, n := range notes {
		recs[i] = mnemo.Record{Vector: vecs[i], Content: n}
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		return err
	}
	q, err := emb.Embed(ctx, []string{"when is the meeting?"})
	if err != nil {
		return err
	}
	for _, query := range []mnemo.Query{
		{Vector: q[0], K: 2},
		{Text: "meeting", K: 2},
		{Vector: q[0], Text: "meeting", K: 2},
	} {
		hits, err := c.Query(ctx, query)
		if err != nil {
			return err
		}
		if len(hits) > 0 {
			fmt.Println("recalled:", hits[0].Record.Content)
		}
	}
	return nil
}
