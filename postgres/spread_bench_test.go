package postgres_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// BenchmarkSpread measures the memory adapters' spread on PostgreSQL: a
// collection of 20,000 records in 50 conversations stored turn about, as
// the adapters stamp them ("mnemo.group", and "mnemo.pos" from one
// collection-wide sequence, so that a conversation's turns are 50
// positions apart), and hybrid queries whose Spread lifts two neighbours
// on each side of each of their fused candidates (about 100), within
// the candidate's conversation (group) or the whole collection
// (no-group). Each query runs with and without its Spread, alternately
// in one loop, with the spread indexes and then with them dropped; the figures are the medians
// (ms) and their ratio. The neighbours' statement of the first query is
// logged with EXPLAIN ANALYZE, its execution time reported as
// spread-stmt-ms.
//
//	go test ./postgres -run '^$' -bench Spread -benchtime 60x -v
func BenchmarkSpread(b *testing.B) {
	dsn := freshDSN(b)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n, groups, dim = 20000, 50, 64
	c, err := s.CreateCollection(ctx, "spread", mnemo.CollectionConfig{Dimension: dim})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	vocab := make([]string, 400)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[int(math.Min(float64(len(vocab)-1), r.ExpFloat64()*60))]
		}
		return strings.Join(ws, " ")
	}
	vector := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	recs := make([]mnemo.Record, 0, 500)
	for i := range n {
		recs = append(recs, mnemo.Record{ID: fmt.Sprintf("m%05d", i), Vector: vector(), Content: words(8 + r.IntN(12)),
			Metadata: map[string]any{"mnemo.group": fmt.Sprintf("conv-%02d", i%groups), "mnemo.pos": i}})
		if len(recs) == cap(recs) || i == n-1 {
			if _, err := c.Upsert(ctx, recs...); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	conn := connect(b, dsn)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	spread := &mnemo.Spread{Group: "mnemo.group", Position: "mnemo.pos", Weight: 0.5, Window: 2}
	queries := make([]mnemo.Query, 20)
	for i := range queries {
		queries[i] = mnemo.Query{Text: words(3), Vector: vector(), K: 10, Fusion: mnemo.Fusion{Depth: 50}, Spread: spread}
	}

	// The first query's candidates, as the spread sees them: every fused hit.
	base := queries[0]
	base.Spread, base.K = nil, 100
	cands, err := c.Query(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	explain := func(spread *mnemo.Spread) float64 {
		q := queries[0]
		q.Spread = spread
		sql, args, err := postgres.SpreadSQL(c, q, cands)
		if err != nil {
			b.Fatal(err)
		}
		rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
		if err != nil {
			b.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d candidates; the neighbours' statement:\n%s", len(cands), strings.Join(plan, "\n"))
		m := regexp.MustCompile(`Execution Time: ([0-9.]+) ms`).FindStringSubmatch(strings.Join(plan, "\n"))
		if m == nil {
			b.Fatal("no execution time in the plan")
		}
		ms, _ := strconv.ParseFloat(m[1], 64)
		return ms
	}
	run := func(b *testing.B, spread *mnemo.Spread) {
		for i := range queries {
			queries[i].Spread = spread
		}
		stmt := explain(spread)
		var with, without []time.Duration
		b.ResetTimer()
		for i := range b.N {
			q := queries[i%len(queries)]
			plain := q
			plain.Spread = nil
			for j, q := range []mnemo.Query{q, plain} {
				start := time.Now()
				if _, err := c.Query(ctx, q); err != nil {
					b.Fatal(err)
				}
				if d := time.Since(start); j == 0 {
					with = append(with, d)
				} else {
					without = append(without, d)
				}
			}
		}
		w, wo := median(with), median(without)
		b.ReportMetric(w, "spread-p50-ms")
		b.ReportMetric(wo, "plain-p50-ms")
		b.ReportMetric(w/wo, "spread/plain")
		b.ReportMetric(stmt, "spread-stmt-ms") // after ResetTimer, which drops reported metrics
	}
	noGroup := &mnemo.Spread{Position: "mnemo.pos", Weight: 0.5, Window: 2}
	b.Run("group/index", func(b *testing.B) { run(b, spread) })
	b.Run("no-group/index", func(b *testing.B) { run(b, noGroup) })
	if _, err := conn.Exec(ctx, `DROP INDEX mnemo_records_1_spread, mnemo_records_1_spread_pos`); err != nil {
		b.Fatal(err)
	}
	b.Run("group/no-index", func(b *testing.B) { run(b, spread) })
}

// median is the median of d in milliseconds.
func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2]) / float64(time.Millisecond)
}
