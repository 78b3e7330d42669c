package mnemo

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mnemodb/mnemo/analysis"
)

// Default BM25 parameters (Robertson's usual values, as Lucene and
// Elasticsearch use).
const (
	DefaultBM25K1 = 1.2
	DefaultBM25B  = 0.75
)

// MaxTextTerms bounds the distinct terms indexed for one record; a record
// with more (a document of megabytes) keeps its most frequent ones.
const MaxTextTerms = 1 << 16

// BM25 holds the parameters of BM25 scoring. It is a plain value, safe to
// copy and share.
type BM25 struct {
	// K1 saturates term frequency: 0 ignores it, larger lets it count
	// longer. Typical values are 0.9 to 2.
	K1 float64 `json:"k1"`
	// B normalises by document length: 0 not at all, 1 fully.
	B float64 `json:"b"`
}

func (p BM25) validate() error {
	if !(p.K1 >= 0 && p.K1 <= 100) || !(p.B >= 0 && p.B <= 1) {
		return fmt.Errorf("BM25 k1 %v, b %v: want k1 in [0, 100] and b in [0, 1]", p.K1, p.B)
	}
	return nil
}

// TextTerms returns what the full-text index of a collection with config
// cfg holds for a record with this content and metadata (in its stored
// form: as decoded from the JSON CheckRecord returns): the distinct terms
// of its text, sorted, each with its frequency, and the text's length in
// terms. The text is the content followed by the string values (or lists
// of strings) of the metadata fields cfg.Text.Fields names, analyzed by
// package analysis; a record with more than MaxTextTerms distinct terms
// keeps its most frequent ones. A config that disables the full-text
// index gives none. Every backend indexes what it returns, so that all
// score alike.
func TextTerms(cfg CollectionConfig, content string, meta map[string]any) (terms []string, freqs []int, length int) {
	if cfg.Text.Disabled {
		return nil, nil, 0
	}
	all := analysis.Terms(textOf(content, meta, cfg.Text.Fields))
	if len(all) == 0 {
		return nil, nil, 0
	}
	counts := analysis.Count(all)
	if len(counts) > MaxTextTerms {
		slices.SortStableFunc(counts, func(a, b analysis.TermCount) int { return b.Count - a.Count })
		counts = counts[:MaxTextTerms]
		slices.SortFunc(counts, func(a, b analysis.TermCount) int { return strings.Compare(a.Term, b.Term) })
	}
	terms = make([]string, len(counts))
	freqs = make([]int, len(counts))
	for i, tc := range counts {
		terms[i], freqs[i] = tc.Term, tc.Count
	}
	return terms, freqs, len(all)
}

// textOf returns the text a record's full-text entry is made of: its
// content and the string values of the configured metadata fields.
func textOf(content string, meta map[string]any, fields []string) string {
	if len(fields) == 0 {
		return content
	}
	var sb strings.Builder
	sb.WriteString(content)
	for _, f := range fields {
		switch v := meta[f].(type) {
		case string:
			sb.WriteByte('\n')
			sb.WriteString(v)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					sb.WriteByte('\n')
					sb.WriteString(s)
				}
			}
		}
	}
	return sb.String()
}
