package store

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// cranfieldDir holds the Cranfield 1400 collection, relative to this
// package's directory; the benchmark skips when it is absent.
const cranfieldDir = "../../../shared/data/cranfield"

type cranfield struct {
	docIDs  []string
	docs    []string
	queries []string
	qids    []string
	rel     map[string]map[string]float64 // query -> doc -> gain
}

func loadCranfield(b *testing.B) *cranfield {
	b.Helper()
	if _, err := os.Stat(filepath.Join(cranfieldDir, "docs.jsonl")); err != nil {
		b.Skip("Cranfield data not present")
	}
	c := &cranfield{rel: map[string]map[string]float64{}}
	readJSONL(b, "docs.jsonl", func(m map[string]string) {
		c.docIDs = append(c.docIDs, m["_id"])
		c.docs = append(c.docs, m["text"])
	})
	readJSONL(b, "queries.jsonl", func(m map[string]string) {
		c.qids = append(c.qids, m["_id"])
		c.queries = append(c.queries, m["text"])
	})
	f, err := os.Open(filepath.Join(cranfieldDir, "qrels.tsv"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Scan() // header
	for s.Scan() {
		parts := strings.Split(s.Text(), "\t")
		grade, err := strconv.Atoi(parts[2])
		if len(parts) != 3 || err != nil || grade < 1 || grade > 4 {
			continue
		}
		if c.rel[parts[0]] == nil {
			c.rel[parts[0]] = map[string]float64{}
		}
		// Cleverdon's grades run from 1 (a complete answer) to 4 (minimal
		// interest); the gain runs the other way.
		c.rel[parts[0]][parts[1]] = float64(5 - grade)
	}
	return c
}

func readJSONL(b *testing.B, name string, fn func(map[string]string)) {
	f, err := os.Open(filepath.Join(cranfieldDir, name))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		var m map[string]any
		if err := json.Unmarshal(s.Bytes(), &m); err != nil {
			b.Fatal(err)
		}
		sm := map[string]string{}
		for k, v := range m {
			if str, ok := v.(string); ok {
				sm[k] = str
			}
		}
		fn(sm)
	}
}

// ndcg returns nDCG@k of a ranked list of doc IDs.
func ndcg(ranked []string, rel map[string]float64, k int) float64 {
	var dcg float64
	for i, d := range ranked[:min(k, len(ranked))] {
		dcg += (math.Pow(2, rel[d]) - 1) / math.Log2(float64(i+2))
	}
	var gains []float64
	for _, g := range rel {
		gains = append(gains, g)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(gains)))
	var idcg float64
	for i, g := range gains[:min(k, len(gains))] {
		idcg += (math.Pow(2, g) - 1) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

func recallAt(ranked []string, rel map[string]float64, k int) float64 {
	hit := 0
	for _, d := range ranked[:min(k, len(ranked))] {
		if rel[d] > 0 {
			hit++
		}
	}
	return float64(hit) / float64(len(rel))
}

// bm25 is the baseline: Okapi BM25 (k1 1.2, b 0.75) over lower-cased words.
type bm25 struct {
	docs  []map[string]int
	lens  []float64
	avg   float64
	df    map[string]int
	total int
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func newBM25(docs []string) *bm25 {
	m := &bm25{df: map[string]int{}, total: len(docs)}
	var sum float64
	for _, d := range docs {
		tf := map[string]int{}
		ws := words(d)
		for _, w := range ws {
			tf[w]++
		}
		for w := range tf {
			m.df[w]++
		}
		m.docs = append(m.docs, tf)
		m.lens = append(m.lens, float64(len(ws)))
		sum += float64(len(ws))
	}
	m.avg = sum / float64(len(docs))
	return m
}

func (m *bm25) rank(query string, k int) []int {
	scores := make([]float64, len(m.docs))
	for _, w := range words(query) {
		df := m.df[w]
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (float64(m.total)-float64(df)+0.5)/(float64(df)+0.5))
		for i, tf := range m.docs {
			if f := float64(tf[w]); f > 0 {
				scores[i] += idf * f * 2.2 / (f + 1.2*(0.25+0.75*m.lens[i]/m.avg))
			}
		}
	}
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx[:min(k, len(idx))]
}

// BenchmarkCranfield indexes the 1,400 Cranfield documents through the
// Semantic store with the default embedder, runs the 225 queries, and
// reports nDCG@10 and recall@100 beside a BM25 baseline computed here.
func BenchmarkCranfield(b *testing.B) {
	c := loadCranfield(b)
	for b.Loop() {
		s, err := OpenSemantic("", nil)
		if err != nil {
			b.Fatal(err)
		}
		byText := map[string]string{}
		for i, d := range c.docs {
			if strings.TrimSpace(d) == "" {
				continue // a few Cranfield records have no text
			}
			if err := s.Store(ctx, d); err != nil {
				b.Fatal(err)
			}
			byText[d] = c.docIDs[i]
		}
		base := newBM25(c.docs)
		var nd, rc, bnd, brc float64
		judged := 0
		for qi, q := range c.queries {
			rel := c.rel[c.qids[qi]]
			if len(rel) == 0 {
				continue
			}
			judged++
			found, err := s.Search(ctx, q, 100)
			if err != nil {
				b.Fatal(err)
			}
			ranked := make([]string, len(found))
			for i, t := range found {
				ranked[i] = byText[t]
			}
			nd += ndcg(ranked, rel, 10)
			rc += recallAt(ranked, rel, 100)
			var bRanked []string
			for _, i := range base.rank(q, 100) {
				bRanked = append(bRanked, c.docIDs[i])
			}
			bnd += ndcg(bRanked, rel, 10)
			brc += recallAt(bRanked, rel, 100)
		}
		s.Close()
		n := float64(judged)
		b.ReportMetric(nd/n, "nDCG@10")
		b.ReportMetric(rc/n, "recall@100")
		b.ReportMetric(bnd/n, "bm25-nDCG@10")
		b.ReportMetric(brc/n, "bm25-recall@100")
		b.ReportMetric((nd/n)/(bnd/n), "nDCG-vs-bm25")
	}
}
