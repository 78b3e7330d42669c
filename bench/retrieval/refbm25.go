package retrieval

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/mnemodb/mnemo/analysis"
)

// RefBM25 is a textbook Okapi BM25 kept apart from the engine, as the
// reference the engine's full-text index is measured against. Tokens
// chooses the words (nil: package analysis, the engine's analyzer).
type RefBM25 struct {
	K1, B   float64
	Tokens  func(string) []string
	Content func(Turn) string
}

// PlainWords lower-cases and splits at every rune that is not a letter or
// digit: BM25's tokenization before any stemming.
func PlainWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

type refIndex struct {
	m    RefBM25
	ids  []string
	tfs  []map[string]int
	lens []float64
	avg  float64
	df   map[string]int
}

func (m RefBM25) tokens(s string) []string {
	if m.Tokens != nil {
		return m.Tokens(s)
	}
	return analysis.Terms(s)
}

func (m RefBM25) build(ids, docs []string) *refIndex {
	ix := &refIndex{m: m, ids: ids, df: map[string]int{}}
	var sum float64
	for _, d := range docs {
		tf := map[string]int{}
		ws := m.tokens(d)
		for _, w := range ws {
			tf[w]++
		}
		for w := range tf {
			ix.df[w]++
		}
		ix.tfs = append(ix.tfs, tf)
		ix.lens = append(ix.lens, float64(len(ws)))
		sum += float64(len(ws))
	}
	ix.avg = sum / float64(len(docs))
	return ix
}

// LoCoMo builds the reference index over a conversation.
func (m RefBM25) LoCoMo(_ context.Context, turns []Turn) (Index, error) {
	content := m.Content
	if content == nil {
		content = SpeakerText
	}
	ids := make([]string, len(turns))
	docs := make([]string, len(turns))
	for i, t := range turns {
		ids[i], docs[i] = t.DiaID, content(t)
	}
	return m.build(ids, docs), nil
}

// Cranfield builds the reference index over a collection.
func (m RefBM25) Cranfield(_ context.Context, ids, docs []string) (Index, error) {
	return m.build(ids, docs), nil
}

func (ix *refIndex) Search(_ context.Context, query string, k int) ([]string, error) {
	n := float64(len(ix.ids))
	scores := make([]float64, len(ix.ids))
	for _, w := range ix.m.tokens(query) {
		df := float64(ix.df[w])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, tf := range ix.tfs {
			if f := float64(tf[w]); f > 0 {
				scores[i] += idf * f * (ix.m.K1 + 1) / (f + ix.m.K1*(1-ix.m.B+ix.m.B*ix.lens[i]/ix.avg))
			}
		}
	}
	order := make([]int, 0, len(scores))
	for i, s := range scores {
		if s > 0 {
			order = append(order, i)
		}
	}
	// Equal scores by ID, as the engine orders them.
	sort.SliceStable(order, func(a, b int) bool {
		if sa, sb := scores[order[a]], scores[order[b]]; sa != sb {
			return sa > sb
		}
		return ix.ids[order[a]] < ix.ids[order[b]]
	})
	out := make([]string, 0, k)
	for _, i := range order[:min(k, len(order))] {
		out = append(out, ix.ids[i])
	}
	return out, nil
}

func (ix *refIndex) Close() error { return nil }
