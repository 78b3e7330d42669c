package bm25

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/analysis"
)

// benchN is the number of documents of the search benchmarks: 100,000,
// or MNEMO_BM25_N.
var benchN = func() int {
	if n, err := strconv.Atoi(os.Getenv("MNEMO_BM25_N")); err == nil && n > 0 {
		return n
	}
	return 100000
}()

// benchWords returns n texts of lo to hi words from a Zipf-distributed
// vocabulary of 20,000 (the engine's benchmark sentences and questions).
func benchWords(n int, seed uint64, lo, hi int) []string {
	r := rand.New(rand.NewPCG(seed, seed+1))
	z := rand.NewZipf(r, 1.1, 2, 19999)
	out := make([]string, n)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		for w := range lo + r.IntN(hi-lo+1) {
			if w > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString("w" + strconv.FormatUint(z.Uint64(), 36))
		}
		out[i] = sb.String()
	}
	return out
}

// benchIndex holds benchN documents of 6 to 30 words, and 500 queries of
// 3 to 8 words, analyzed.
var benchIndex = sync.OnceValues(func() (*Index, [][]string) {
	idx := New()
	for i, text := range benchWords(benchN, 7, 6, 30) {
		idx.Add(uint64(i), docOf(text))
	}
	var qs [][]string
	for _, text := range benchWords(500, 8, 3, 8) {
		qs = append(qs, analysis.Terms(text))
	}
	return idx, qs
})

// BenchmarkSearch runs the queries in turn for the top 30 with ties (the
// engine's hybrid depth), as SearchTies, and reports the p50 and p99
// latency.
func BenchmarkSearch(b *testing.B) {
	idx, qs := benchIndex()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		idx.SearchTies(qs[i%len(qs)], 30, defaultParams, nil)
		lat = append(lat, time.Since(t0))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "us-p50")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "us-p99")
}
