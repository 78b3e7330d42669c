package otelmnemo_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	otelmnemo "github.com/mnemodb/mnemo/integrations/otel"
)

// A Recorder on an SDK meter provider; a program gives it the provider
// its exporter (OTLP, Prometheus) is on, here a manual reader.
func Example() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	rec, err := otelmnemo.New(&otelmnemo.Options{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err != nil {
		panic(err)
	}
	db, err := engine.Open("", &engine.Options{InMemory: true, Metrics: rec})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		panic(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 0}}, mnemo.Record{Vector: []float32{0, 1}}); err != nil {
		panic(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "mnemo.operation.records" {
			for _, p := range sum.DataPoints {
				fmt.Println(p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
			}
		}
	}
	// Output: mnemo.collection=notes,mnemo.op=upsert 2
}
