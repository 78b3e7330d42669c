package toolmem

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRetrieve stores n tool memories (MNEMO_TOOLMEM_N, default
// 10,000) made from templates, then measures Retrieve, embedding included,
// and reports p50 and p99 latency. Run it on one core with -cpu 1.
func BenchmarkRetrieve(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MNEMO_TOOLMEM_N")); err == nil && v > 0 {
		n = v
	}
	r := rand.New(rand.NewPCG(1, 1))
	cities := []string{"Paris", "Berlin", "Lagos", "Lima", "Osaka", "Perth", "Quito", "Oslo", "Delhi", "Austin"}
	templates := []struct{ q, tool string }{
		{"What is the weather in %s on day %d?", "get_weather"},
		{"Book a table for %d people in %s", "book_restaurant"},
		{"How far is %s from the airport, route %d?", "get_directions"},
		{"Convert %d dollars to the currency of %s", "convert_currency"},
		{"List the open tickets for the %s office, batch %d", "list_tickets"},
	}
	question := func(i int) (string, string) {
		t := templates[i%len(templates)]
		city, num := cities[r.IntN(len(cities))], r.IntN(1000)
		if t.tool == "book_restaurant" || t.tool == "convert_currency" {
			return fmt.Sprintf(t.q, num, city), t.tool
		}
		return fmt.Sprintf(t.q, city, num), t.tool
	}
	m, err := Open("", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for i := 0; i < n; i++ {
		q, tool := question(i)
		if _, err := m.Store(ctx, Entry{Question: q, ToolName: tool, ToolArgs: map[string]any{"i": i}}); err != nil {
			b.Fatal(err)
		}
	}
	queries := make([]string, 1000)
	for i := range queries {
		queries[i], _ = question(i)
	}
	lat := make([]time.Duration, 0, b.N)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := m.Retrieve(ctx, queries[i%len(queries)], nil); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
	b.ReportMetric(float64(n), "memories")
}
