package mnemo

import (
	"math"
	"slices"
)

// Query describes a query: nearest neighbours of a vector, records
// matching a text (BM25 over the full-text index), or both fused (hybrid).
// It is plain data, read by the call it is given to and not kept: it may
// be shared by goroutines that do not change it.
type Query struct {
	// Vector is the query vector; its length is the collection's
	// dimension. Required by the vector and hybrid modes; in text mode,
	// when given, it fills every hit's Distance and Similarity.
	Vector []float32
	// Text is the query text for the full-text side. It goes through the
	// same analyzer as the records (package analysis); a text with no
	// terms ("?", "") matches nothing.
	Text string
	// Mode selects the retrieval; ModeAuto (the zero value) is hybrid when
	// both Vector and Text are set, text when only Text is, and vector
	// otherwise.
	Mode Mode
	// K is the number of hits wanted; zero means 10.
	K int
	// Ef is the HNSW candidate-list size; zero means the collection's
	// EfSearch. Larger is slower and more accurate. A query without Ef on
	// a small collection (n*(dimension+16) up to 20,000*400) is answered
	// by an exact scan instead; setting Ef chooses the graph at any size.
	Ef int
	// Filter restricts the hits to records whose metadata it admits (nil:
	// all). Both sides of a hybrid query apply it.
	Filter *Filter
	// MinSimilarity, when set, drops hits whose Similarity is below it (a
	// hit exactly at the threshold is kept), in every mode that has a
	// vector: a hybrid hit found only by its words must be that similar
	// too. Text mode without a vector refuses it.
	MinSimilarity *float32
	// Exact forces an exact scan instead of the graph search.
	Exact bool
	// WithVectors fills Hit.Record.Vector. Without it a query answers from
	// memory (metadata, and contents up to 1 KiB, are kept there) and reads
	// the disk only for larger contents.
	WithVectors bool
	// Fusion tunes how a hybrid query merges its two sides.
	Fusion Fusion
	// BM25 overrides the collection's BM25 parameters for this query.
	BM25 *BM25
	// Spread, when set, lets a match lift the records next to it in a
	// sequence, such as the turns around a turn of a conversation (text
	// and hybrid modes).
	Spread *Spread
}

// Spread passes part of each candidate's score to the records next to it
// in its sequence, such as the turns before and after a turn of a
// conversation: an answer often sits beside the turn that shares the
// question's words. A candidate at position p of group g adds Weight
// times its score to its neighbours: of the other records of group g
// that the filter admits, found or not by the query, the Window with the
// largest positions below p and the Window with the smallest above p;
// records at equal positions count in ID order, and records at p itself
// are not neighbours. Neighbours are counted in records, not positions,
// so a group's positions may have gaps (several conversations numbered
// from one sequence, deleted records, times): only their order counts.
// The hits are then ranked by the new scores. Records without both
// fields neither give nor take. Neighbours the query had not found join
// the hits after its candidates, in ID order, so that equal scores among
// them are ranked by ID on every backend. A text query with a vector and
// MinSimilarity drops the hits under it before K cuts the ranking.
// Spread is plain data, safe to read from several goroutines while no one
// changes it.
type Spread struct {
	// Group is the metadata field whose equal values form one sequence
	// (a session id, say); empty means the whole collection is one.
	// Values compare as filters compare them: 1, "1" and true are three
	// groups.
	Group string
	// Position is the metadata field holding a record's position in its
	// sequence, an integer (a turn number, a time in milliseconds).
	// Positions are compared as float64: past 2^53, where float64 skips
	// integers, two positions float64 rounds together are equal.
	Position string
	// Weight is the share of a candidate's score each neighbour gets, in
	// (0, 1].
	Weight float64
	// Window is how many records on each side count, at most
	// MaxSpreadWindow; zero means 1.
	Window int
}

// MaxSpreadWindow bounds Spread.Window.
const MaxSpreadWindow = 16

// The metadata fields in which the memory adapters and the command line
// keep a memory's conversation (its group: a session within a scope) and
// its place in it, and the neighbour spreading they query with by
// default (DefaultSpread), chosen by measurement on conversations.
const (
	GroupField          = "mnemo.group"
	PositionField       = "mnemo.pos"
	DefaultSpreadWeight = 0.5
	DefaultSpreadWindow = 2
)

// DefaultSpread returns the neighbour spreading the memory adapters and
// the command line use by default: over GroupField and PositionField,
// DefaultSpreadWeight of a match's score to the DefaultSpreadWindow
// memories on each side of it in its conversation.
func DefaultSpread() *Spread {
	return &Spread{Group: GroupField, Position: PositionField, Weight: DefaultSpreadWeight, Window: DefaultSpreadWindow}
}

// SpreadDepth is how many candidates a text query with Spread scores
// before it spreads their scores (a hybrid query spreads over its fused
// candidates).
const SpreadDepth = 100

// Mode is a query's retrieval mode.
type Mode string

// Modes.
const (
	ModeAuto   Mode = ""
	ModeVector Mode = "vector" // nearest neighbours of Query.Vector
	ModeText   Mode = "text"   // BM25 over the full-text index
	ModeHybrid Mode = "hybrid" // both, fused
)

// FusionMethod names how a hybrid query merges its sides' rankings.
type FusionMethod string

// Fusion methods.
const (
	// FusionWeighted adds the sides' scores, each min-max normalised over
	// its own candidates to [0, 1], weighted: w*vector + (1-w)*text. A
	// side that did not find a hit contributes 0. The default.
	FusionWeighted FusionMethod = "weighted"
	// FusionRRF is reciprocal-rank fusion: a hit scores the sum over the
	// sides that found it of w / (RRFK + rank), rank counted from 1, with
	// w the side's weight. It needs no calibration between the sides'
	// scores, and ignores how far ahead a side's best hits are.
	FusionRRF FusionMethod = "rrf"
)

// DefaultVectorWeight is the vector side's weight in a hybrid query
// unless Fusion.VectorWeight says otherwise.
const DefaultVectorWeight = 0.3

// Fusion tunes a hybrid query. The zero value is weighted fusion with the
// vector side weighing DefaultVectorWeight, over DefaultFusionDepth
// candidates from each side. These defaults were chosen by measuring
// retrieval quality with the offline embedder on conversations and on a
// classic test collection (docs/performance-notes.md, "Retrieval
// defaults"). A stronger embedder earns a larger vector weight. Fusion is
// a plain value, safe to copy and share.
type Fusion struct {
	// Method is FusionWeighted (the default when empty) or FusionRRF.
	Method FusionMethod
	// RRFK is reciprocal-rank fusion's k; zero means 60.
	RRFK int
	// VectorWeight is the vector side's weight w in (0, 1); the text
	// side's is 1-w. Zero means DefaultVectorWeight.
	VectorWeight float64
	// Depth is how many candidates each side retrieves before fusion; zero
	// means max(K, DefaultFusionDepth).
	Depth int
}

// DefaultFusionDepth is the number of candidates each side of a hybrid
// query retrieves unless Fusion.Depth says otherwise (at least K).
// Deeper costs more and, measured, finds no more
// (docs/performance-notes.md, "Retrieval defaults").
const DefaultFusionDepth = 30

// Hit is one query result. The hits a query returns, and their records,
// belong to the caller.
type Hit struct {
	Record Record
	// Distance is the raw distance of the collection's metric: cosine
	// distance in [0, 2], negative inner product, or squared L2. Every
	// hit of a query with a vector has it, whichever side found it; zero
	// in a text query without a vector.
	Distance float32
	// Similarity is Similarity(metric, Distance): larger is nearer.
	Similarity float32
	// Score ranks the hits: Similarity in vector mode, the BM25 score in
	// text mode, the fused score in hybrid mode.
	Score float64
	// VectorRank and TextRank are the hit's ranks (from 1) among each
	// side's candidates; 0 when that side did not find it or did not run.
	VectorRank, TextRank int
	// TextScore is the hit's BM25 score (0 when the text side did not
	// find it).
	TextScore float64
}

// Place returns where a record with metadata meta sits in s's sequences:
// its group (the canonical value of the Group field, as filters compare
// it; nil when s has no Group) and its position (the Position field, an
// integer). ok is false for a record that neither gives nor takes: no
// integer position, or no scalar, non-null group.
func (s *Spread) Place(meta map[string]any) (group any, pos float64, ok bool) {
	p, ok := FilterValue(meta[s.Position])
	pos, isNum := p.(float64)
	if !ok || !isNum || pos != math.Trunc(pos) || math.IsInf(pos, 0) {
		return nil, 0, false
	}
	if s.Group == "" {
		return nil, pos, true
	}
	g, ok := FilterValue(meta[s.Group])
	if !ok || g == nil {
		return nil, 0, false
	}
	return g, pos, true
}

// SortHits orders hits as every backend ranks them: by Score, best first;
// equal scores keep their order (build the candidates vector side first,
// each side in its own rank order). O(n log n).
func SortHits(hits []Hit) {
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
}
