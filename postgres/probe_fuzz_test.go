package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

// TestProbeTextFuzz: adversarial corpora and queries, compared with the
// engine.
func TestProbeTextFuzz(t *testing.T) {
	serverDSN(t)
	if raceDetector {
		t.Skip("hundreds of queries one at a time: minutes under the race detector, which it does not need")
	}
	cfg := mnemo.CollectionConfig{Dimension: 3, Index: mnemo.Flat, Text: mnemo.TextConfig{Fields: []string{"title", "tags"}}}
	p := newProbePair(t, "fuzz", cfg)
	r := rand.New(rand.NewPCG(11, 12))
	z := rand.NewZipf(r, 1.1, 2, 2000)
	vocab := func() string { return fmt.Sprintf("w%d", z.Uint64()) }
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab()
		}
		return strings.Join(ws, " ")
	}
	record := func(i int) mnemo.Record {
		rec := mnemo.Record{ID: fmt.Sprintf("r%04d", i), Vector: []float32{float32(r.IntN(3)), float32(r.IntN(3)), 1},
			Metadata: map[string]any{"g": float64(i % 7), "pos": float64(i % 50), "sess": fmt.Sprint(i % 3)}}
		switch r.IntN(12) {
		case 0:
			rec.Content = "" // empty
		case 1:
			rec.Content = "the and of a to in" // stop words only
		case 2:
			rec.Content = rep(vocab(), 500+r.IntN(3000)) // huge tf
		case 3:
			var ws []string
			for j := range 2000 + r.IntN(2000) {
				ws = append(ws, fmt.Sprintf("u%d_%d", i, j)) // thousands of distinct terms
			}
			rec.Content = strings.Join(ws, " ") + " " + text(5)
		default:
			rec.Content = text(1 + r.IntN(40))
		}
		if r.IntN(3) == 0 {
			rec.Metadata["title"] = text(1 + r.IntN(5))
		}
		if r.IntN(4) == 0 {
			rec.Metadata["tags"] = []any{vocab(), vocab(), 3.0, "the"}
		}
		return rec
	}
	const n = 1500
	for i := 0; i < n; i += 150 {
		var batch []mnemo.Record
		for j := i; j < i+150; j++ {
			batch = append(batch, record(j))
		}
		p.upsert(t, batch...)
	}
	filters := []string{"", `{"g": 3}`, `{"g": 99}`, `{"g": {"$gte": 0}}`, `{"pos": 7, "g": 0}`, `{"$or": [{"sess": "1"}, {"g": 2}]}`}
	fails := 0
	ask := func(round string) {
		for i := range 150 {
			q := mnemo.Query{Mode: mnemo.ModeText, K: []int{1, 2, 10, 50, 1000}[i%5]}
			switch i % 6 {
			case 0:
				q.Text = vocab()
			case 1:
				q.Text = text(30 + r.IntN(20))
			case 2:
				w := vocab()
				q.Text = w + " " + w + " " + w + " " + vocab()
			case 3:
				q.Text = "absentterm " + vocab() + " nothere"
			case 4:
				q.Text = text(2 + r.IntN(5))
			case 5:
				q.Text = fmt.Sprintf("w%d w%d", 2+r.IntN(5), 2+r.IntN(30))
			}
			if f := filters[i%len(filters)]; f != "" {
				var err error
				if q.Filter, err = mnemo.ParseFilter(f); err != nil {
					t.Fatal(err)
				}
			}
			switch i % 7 {
			case 1:
				q.BM25 = &mnemo.BM25{K1: 0, B: 0.75}
			case 2:
				q.BM25 = &mnemo.BM25{K1: 1.2, B: 0}
			case 3:
				q.BM25 = &mnemo.BM25{K1: 1.2, B: 1}
			case 4:
				q.BM25 = &mnemo.BM25{K1: 100, B: 1}
			case 5:
				q.BM25 = &mnemo.BM25{K1: 100, B: 0}
			}
			switch i % 11 {
			case 3:
				q.Mode, q.Vector = mnemo.ModeHybrid, []float32{1, 0, 1}
			case 5:
				q.Mode, q.Vector = mnemo.ModeHybrid, []float32{0, 1, 1}
				q.Fusion = mnemo.Fusion{Method: mnemo.FusionRRF, RRFK: 1 + i%5, VectorWeight: 0.5}
			case 7:
				q.Mode, q.Vector, q.Exact = mnemo.ModeHybrid, []float32{1, 1, 0}, true
				q.Fusion = mnemo.Fusion{Depth: 7}
			case 9:
				q.Spread = &mnemo.Spread{Position: "pos", Group: "sess", Weight: 0.5, Window: 2}
			}
			if !p.compare(t, fmt.Sprintf("%s: %q k %d filter %v bm25 %+v mode %s fusion %+v spread %v", round, q.Text, q.K, q.Filter, q.BM25, q.Mode, q.Fusion, q.Spread != nil), q) {
				fails++
				if fails > 8 {
					t.FailNow()
				}
			}
		}
	}
	ask("loaded")
	// Rewrite: shrink the long and huge-tf records (loose bounds), empty some, delete some.
	for round := range 3 {
		var batch []mnemo.Record
		for i := round; i < n; i += 4 {
			rec := record(i)
			if r.IntN(3) == 0 {
				rec.Content = text(1 + r.IntN(3))
			}
			batch = append(batch, rec)
		}
		p.upsert(t, batch...)
		var del []string
		for i := round; i < n; i += 17 {
			del = append(del, fmt.Sprintf("r%04d", i))
		}
		p.del(t, del...)
		ask(fmt.Sprintf("rewrite %d", round))
	}
	checkTextIndex(t, connect(t, p.dsn), "fuzz")
}
