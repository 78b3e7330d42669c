package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
)

// BenchmarkScopes compares the two ways to keep many users' facts: one
// collection with a scope per user ("one-collection": every search
// filtered to the user inside the engine) and a collection per user
// ("per-user"). It loads MNEMO_BENCH_USERS users (default 10,000) with
// MNEMO_BENCH_PER_USER facts each (default 100) into an in-memory
// database, embedded by the offline embedder at MNEMO_BENCH_DIM
// dimensions (default 64), then measures SearchHits of a random user's
// own fact (embedding included) and reports its p50 and p99 and the heap
// in use after loading. Loading is not timed. The default size needs a
// few GB of memory and minutes to load:
//
//	go test -run '^$' -bench BenchmarkScopes -benchtime 2000x ./memory/store
func BenchmarkScopes(b *testing.B) {
	users := envInt("MNEMO_BENCH_USERS", 10000)
	per := envInt("MNEMO_BENCH_PER_USER", 100)
	dim := envInt("MNEMO_BENCH_DIM", 64)
	e, err := embed.NewHashing(dim)
	if err != nil {
		b.Fatal(err)
	}
	fact := func(u, i int) string {
		return fmt.Sprintf("user %d noted item %d: the %s is kept in drawer %d", u, i, []string{"passport", "charger", "receipt", "key", "ticket"}[i%5], (u*31+i)%97)
	}
	for _, layout := range []string{"one-collection", "per-user"} {
		b.Run(layout, func(b *testing.B) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			db, err := engine.Open("", &engine.Options{InMemory: true})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			s := db.Store()
			handles := make([]*Semantic, users)
			for u := range users {
				o := &SemanticOptions{Embedder: e, SweepEvery: -1}
				if layout == "one-collection" {
					o.Scope = scope.Of("user", strconv.Itoa(u))
				} else {
					o.Collection = "memories-" + strconv.Itoa(u)
				}
				if handles[u], err = NewSemantic(ctx, s, o); err != nil {
					b.Fatal(err)
				}
				if err := load(ctx, s, handles[u], e, o, u, per, fact); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			rng := rand.New(rand.NewPCG(1, 2))
			lat := make([]time.Duration, 0, b.N)
			misses := 0
			b.ResetTimer()
			for b.Loop() {
				u, i := rng.IntN(users), rng.IntN(per)
				t0 := time.Now()
				hits, err := handles[u].SearchHits(ctx, fact(u, i), 5)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if len(hits) == 0 || hits[0].Text != fact(u, i) {
					misses++
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(after.HeapInuse-min(after.HeapInuse, before.HeapInuse))/(1<<20), "heap-MB")
			b.ReportMetric(float64(misses)/float64(len(lat)), "miss-rate")
		})
	}
}

// load stores user u's facts through the collection h writes to, in
// one batch, with the metadata h.Add would give them (its scope and
// place).
func load(ctx context.Context, s mnemo.Store, h *Semantic, e embed.Embedder, o *SemanticOptions, u, per int, fact func(u, i int) string) error {
	texts := make([]string, per)
	for i := range texts {
		texts[i] = fact(u, i)
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return err
	}
	recs := make([]mnemo.Record, per)
	for i := range recs {
		meta := o.Scope.Metadata()
		if meta == nil {
			meta = map[string]any{}
		}
		meta[textvec.PosField] = u*per + i
		recs[i] = mnemo.Record{ID: fmt.Sprintf("u%d-%d", u, i), Vector: vecs[i], Content: texts[i], Metadata: meta}
	}
	return h.c.Do(ctx, func(c mnemo.Collection) error {
		_, err := c.Upsert(ctx, recs...)
		return err
	})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
