package vectorstore

import (
	"fmt"
	"math"

	"github.com/mnemodb/mnemo"
)

// Search is one retrieval request of a framework: a query text, how many
// hits, a minimum score and a metadata filter. It is a plain value, safe
// to share between goroutines that do not change it (a Filter is
// immutable).
type Search struct {
	// Text is the query; it is embedded, and in hybrid and text mode its
	// words are searched too.
	Text string
	// K is the number of hits wanted, at least 1.
	K int
	// MinScore, when set, drops hits whose score (the cosine similarity
	// 1 - d) is below it, in [-1, 1]; a hit exactly at it is kept.
	MinScore *float64
	// Filter restricts the hits to documents whose metadata it admits
	// (nil: all; see FilterOf).
	Filter *mnemo.Filter
	// Mode is mnemo.ModeHybrid, mnemo.ModeVector or mnemo.ModeText;
	// empty means the Store's Options.Mode (hybrid when that is empty too).
	Mode mnemo.Mode
}

// Check reports what is wrong with q's k and minimum score, wrapping
// ErrInvalid. The text is checked when it is embedded (CheckText), the
// mode by the query (mnemo.ErrBadQuery).
func (q Search) Check() error {
	if q.K < 1 {
		return fmt.Errorf("%w: k is %d, want at least 1", ErrInvalid, q.K)
	}
	if t := q.MinScore; t != nil && (math.IsNaN(*t) || *t < -1 || *t > 1) {
		return fmt.Errorf("%w: minimum score %v, want -1..1", ErrInvalid, *t)
	}
	return nil
}

// Query is the one place that decides how a search retrieves, given v,
// the embedding of q.Text: the query's words and its embedding fused
// (hybrid, when q.Mode is empty or hybrid: the collection's full-text
// index and its vectors, see mnemo.Query), or one side alone (vector or
// text), restricted by the filter and cut at the minimum score. The
// vector goes with every mode, text mode too, so that every hit carries
// its cosine similarity, whichever side found it, and the score keeps its
// meaning in every mode.
func (q Search) Query(v []float32) mnemo.Query {
	mq := mnemo.Query{Vector: v, Text: q.Text, Mode: q.Mode, K: q.K, Filter: q.Filter}
	if q.Mode == mnemo.ModeVector {
		mq.Text = ""
	}
	if q.MinScore != nil {
		t := float32(*q.MinScore)
		mq.MinSimilarity = &t
	}
	return mq
}
