package engine

import (
	"github.com/mnemodb/mnemo"

	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCheckpointQueryLatency measures what a checkpoint costs the
// queries that run beside it. A collection of 12,000 random 128-d records
// is checkpointed; then, per iteration, a third of it is overwritten
// (4,000 tombstones in the index, untimed), one goroutine queries (k 10,
// ef 64, the graph plan) back to back while another upserts one record a
// millisecond, 4,000 queries long, and then again while a third
// checkpoints, which compacts the index. Reported: query latency p50, p99
// and max during the checkpoint, p50 and p99 without it, their p99 ratio,
// the longest upsert with and without it, the queries made during it, and
// its duration (cp-ms; ns/op is that and the timer's overhead). Then
// another 4,000 records are overwritten and a checkpoint runs alone,
// untimed but for cp-alone-ms.
//
//	go test -run '^$' -bench CheckpointQueryLatency -benchtime 3x ./engine/
func BenchmarkCheckpointQueryLatency(b *testing.B) {
	const n, dim, overwrite, k, ef = 12000, 128, 4000, 10, 64
	r := rand.New(rand.NewPCG(7, 7))
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	db, err := Open("", &Options{InMemory: true, NoSync: true, CheckpointEvery: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: dim})
	if err != nil {
		b.Fatal(err)
	}
	upsert := func(ids []int) {
		for lo := 0; lo < len(ids); lo += 1000 {
			batch := make([]mnemo.Record, 0, 1000)
			for _, i := range ids[lo:min(lo+1000, len(ids))] {
				batch = append(batch, mnemo.Record{ID: fmt.Sprint(i), Vector: randVec(), Content: "x"})
			}
			if _, err := c.Upsert(ctx, batch...); err != nil {
				b.Fatal(err)
			}
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	upsert(all)
	if err := c.Checkpoint(ctx); err != nil {
		b.Fatal(err)
	}
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = randVec()
	}
	query := func(i int) time.Duration {
		start := time.Now()
		if _, err := c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], K: k, Ef: ef}); err != nil {
			b.Error(err)
		}
		return time.Since(start)
	}

	// writer upserts one random record at a time until stop is set, keeping
	// the longest upsert it saw in *longest.
	writer := func(stop *atomic.Bool, longest *time.Duration, seed uint64) {
		w := rand.New(rand.NewPCG(seed, 1))
		for !stop.Load() {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(w.NormFloat64())
			}
			start := time.Now()
			if _, err := c.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(w.IntN(n)), Vector: v, Content: "x"}); err != nil {
				b.Error(err)
				return
			}
			*longest = max(*longest, time.Since(start))
			time.Sleep(time.Millisecond)
		}
	}
	var base, during []time.Duration
	var cpTotal, alone, upsertMax, baseUpsertMax time.Duration
	b.ResetTimer()
	for it := range b.N {
		b.StopTimer()
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		upsert(all[:overwrite])
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			writer(&stop, &baseUpsertMax, uint64(2*it))
		}()
		for i := range 4000 {
			base = append(base, query(i))
		}
		stop.Store(true)
		wg.Wait()
		b.StartTimer()

		stop.Store(false)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer stop.Store(true)
			start := time.Now()
			if err := c.Checkpoint(ctx); err != nil {
				b.Error(err)
			}
			cpTotal += time.Since(start)
		}()
		go func() {
			defer wg.Done()
			writer(&stop, &upsertMax, uint64(2*it+1))
		}()
		for i := 0; !stop.Load(); i++ {
			during = append(during, query(i))
		}
		wg.Wait()

		b.StopTimer()
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		upsert(all[:overwrite])
		start := time.Now()
		if err := c.Checkpoint(ctx); err != nil {
			b.Fatal(err)
		}
		alone += time.Since(start)
		b.StartTimer()
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	slices.Sort(base)
	slices.Sort(during)
	pct := func(l []time.Duration, p int) time.Duration { return l[min(len(l)-1, len(l)*p/100)] }
	b.ReportMetric(ms(pct(base, 50)), "base-p50-ms")
	b.ReportMetric(ms(pct(base, 99)), "base-p99-ms")
	b.ReportMetric(ms(pct(during, 50)), "cp-p50-ms")
	b.ReportMetric(ms(pct(during, 99)), "cp-p99-ms")
	b.ReportMetric(ms(during[len(during)-1]), "cp-max-ms")
	b.ReportMetric(float64(pct(during, 99))/float64(pct(base, 99)), "p99-ratio")
	b.ReportMetric(float64(len(during))/float64(b.N), "queries/cp")
	b.ReportMetric(ms(upsertMax), "cp-upsert-max-ms")
	b.ReportMetric(ms(baseUpsertMax), "base-upsert-max-ms")
	b.ReportMetric(ms(cpTotal)/float64(b.N), "cp-ms")
	b.ReportMetric(ms(alone)/float64(b.N), "cp-alone-ms")
}
