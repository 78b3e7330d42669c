package engine

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

// TestSpreadOrdinal checks spreading against a reference written from
// mnemo.Spread's definition, on layouts that defeat a positional window:
// groups interleaved many ways, gaps, positions shared by several
// records, sparse positions (times), huge positions, a filter, and
// writes between queries (which must reach the orders spread keeps).
func TestSpreadOrdinal(t *testing.T) {
	layouts := map[string]func(r *rand.Rand, i int) (group string, pos int64){
		"dense, one group":    func(_ *rand.Rand, i int) (string, int64) { return "g", int64(i) },
		"interleaved 3 ways":  func(_ *rand.Rand, i int) (string, int64) { return fmt.Sprint("g", i%3), int64(i) },
		"interleaved 50 ways": func(_ *rand.Rand, i int) (string, int64) { return fmt.Sprint("g", i%50), int64(i) },
		"random groups, gaps": func(r *rand.Rand, i int) (string, int64) {
			return fmt.Sprint("g", r.IntN(4)), int64(i * (1 + r.IntN(20)))
		},
		"equal positions":       func(r *rand.Rand, i int) (string, int64) { return fmt.Sprint("g", r.IntN(2)), int64(r.IntN(30)) },
		"times in milliseconds": func(r *rand.Rand, i int) (string, int64) { return "g", 1_700_000_000_000 + int64(r.IntN(1_000_000)) },
		"past 2^52":             func(r *rand.Rand, i int) (string, int64) { return "g", 1<<52 + int64(r.IntN(400)) },
	}
	for name, place := range layouts {
		for _, group := range []string{"session", ""} {
			t.Run(fmt.Sprintf("%s, group %q", name, group), func(t *testing.T) {
				r := rand.New(rand.NewPCG(1, uint64(len(name))))
				db := mustOpen(t, "", &Options{InMemory: true})
				defer db.Close()
				c := mustCollection(t, db, "t", mnemo.CollectionConfig{Dimension: 2})
				words := []string{"apple", "pear", "plum", "fig"}
				write := func(from, to int) {
					for i := from; i < to; i++ {
						g, p := place(r, i)
						rec := mnemo.Record{ID: fmt.Sprintf("r%03d", r.IntN(400)), Vector: []float32{1, float32(i % 5)},
							Content:  words[r.IntN(len(words))] + " " + words[r.IntN(len(words))],
							Metadata: map[string]any{"session": g, "pos": p, "keep": r.IntN(5) != 0, "rare": r.IntN(20) == 0}}
						if _, err := c.Upsert(ctx, rec); err != nil {
							t.Fatal(err)
						}
					}
				}
				write(0, 200)
				keep, _ := mnemo.ParseFilter(`{"keep": true}`)
				rare, _ := mnemo.ParseFilter(`{"rare": true}`) // selective: read in order alone
				rounds := 4
				if raceEnabled {
					rounds = 1 // the reference is slow under the race detector
				}
				for round := range rounds {
					for _, word := range words {
						for _, f := range []*mnemo.Filter{nil, keep, rare} {
							for _, window := range []int{1, 3} {
								nb := &mnemo.Spread{Group: group, Position: "pos", Weight: 0.5, Window: window}
								checkSpread(t, c, mnemo.Query{Text: word, K: 15, Filter: f, Spread: nb})
							}
						}
					}
					write(200+round*20, 220+round*20) // new records and moves between groups
					if round%2 == 1 {
						if _, err := c.Delete(ctx, fmt.Sprintf("r%03d", r.IntN(400)), fmt.Sprintf("r%03d", r.IntN(400))); err != nil {
							t.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// checkSpread compares q's answer with the reference: the candidates
// (the text query's best SpreadDepth), each giving Weight times its
// score to the Window admitted records of its group nearest below and
// above its position, ranked as SortHits ranks them.
func checkSpread(t *testing.T, c *Collection, q mnemo.Query) {
	t.Helper()
	plain := q
	plain.Spread, plain.K = nil, mnemo.SpreadDepth
	cands, err := c.Query(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := c.Scan(ctx, "", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	nb := q.Spread
	type rec struct {
		id    string
		group any
		pos   float64
	}
	var placedRecs []rec
	for _, r := range all {
		if !q.Filter.IsEmpty() && !q.Filter.Match(r.Metadata) {
			continue
		}
		if g, p, ok := nb.Place(r.Metadata); ok {
			placedRecs = append(placedRecs, rec{r.ID, g, p})
		}
	}
	meta := map[string]map[string]any{}
	for _, r := range all {
		meta[r.ID] = r.Metadata
	}
	hits := slices.Clone(cands)
	at := map[string]int{}
	for i, h := range hits {
		at[h.Record.ID] = i
	}
	found := len(hits)
	base := make([]float64, found)
	for i, h := range cands {
		base[i] = h.Score
	}
	for i, h := range cands {
		g, p, ok := nb.Place(meta[h.Record.ID])
		if !ok {
			continue
		}
		var below, above []rec
		for _, r := range placedRecs {
			if r.id == h.Record.ID || r.group != g {
				continue
			}
			if r.pos < p {
				below = append(below, r)
			} else if r.pos > p {
				above = append(above, r)
			}
		}
		slices.SortFunc(below, func(a, b rec) int { return cmp.Or(cmp.Compare(b.pos, a.pos), strings.Compare(a.id, b.id)) })
		slices.SortFunc(above, func(a, b rec) int { return cmp.Or(cmp.Compare(a.pos, b.pos), strings.Compare(a.id, b.id)) })
		w := max(nb.Window, 1)
		for _, r := range append(below[:min(w, len(below))], above[:min(w, len(above))]...) {
			j, ok := at[r.id]
			if !ok {
				j = len(hits)
				at[r.id] = j
				hits = append(hits, mnemo.Hit{Record: mnemo.Record{ID: r.id}})
			}
			hits[j].Score += nb.Weight * base[i]
		}
	}
	slices.SortFunc(hits[found:], func(a, b mnemo.Hit) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	mnemo.SortHits(hits)
	want := hits[:min(len(hits), q.K)]
	got, err := c.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%+v: %d hits, want %d:\n%v\n%v", *nb, len(got), len(want), spreadIDs(got), spreadIDs(want))
	}
	for i := range got {
		if got[i].Record.ID != want[i].Record.ID || got[i].Score != want[i].Score {
			t.Fatalf("%+v %q: hit %d:\ngot  %v\nwant %v", *nb, q.Text, i, spreadIDs(got), spreadIDs(want))
		}
	}
}

func spreadIDs(hits []mnemo.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s:%.4g", h.Record.ID, h.Score)
	}
	return out
}
