package engine

import (
	"fmt"
	"math"

	"github.com/mnemodb/mnemo/index"
)

// The checks below are the ones the engine applies at its API boundary,
// exported so that another implementation of the same API (a backend on a
// database server) refuses exactly what the engine refuses, with the same
// sentinel errors.

// CheckCollectionName reports whether name is a valid name for a new
// collection: 1 to 256 bytes of UTF-8 without control characters
// (ErrInvalidConfig otherwise).
func CheckCollectionName(name string) error { return validName(name) }

// CheckID reports whether id is a valid record ID to look up or delete: 1
// to MaxIDLength bytes of UTF-8 (ErrInvalidID otherwise). A record to
// store must also not hold U+0000 in its ID (see CheckRecord).
func CheckID(id string) error { return validateID(id) }

// CheckRecord reports whether a collection with config cfg accepts r in an
// Upsert, with the error Upsert would return (ErrInvalidID,
// ErrInvalidRecord, ErrDimension, ErrNonFinite, ErrZeroVector,
// ErrNormOverflow), and returns r's metadata encoded as the JSON the
// engine stores (nil for none). Content or metadata that is not valid
// UTF-8, and an ID holding U+0000, are ErrInvalidRecord. An empty r.ID is
// valid (Upsert assigns one); i is r's position in its batch, which names
// it in errors then.
func CheckRecord(cfg CollectionConfig, i int, r Record) ([]byte, error) {
	name := recordName(i, r.ID)
	if r.ID == "" {
		r.ID = "_" // Upsert assigns a valid ID
	}
	meta, err := validateRecord(&r, name)
	if err != nil {
		return nil, err
	}
	if err := checkVector(cfg, r.Vector); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return meta, nil
}

func checkVector(cfg CollectionConfig, v []float32) error {
	cfg = cfg.withDefaults()
	return index.CheckVector(v, cfg.Dimension, cfg.Metric)
}

// CheckQuery validates q for the collection name with config cfg as Query
// does (ErrBadQuery, and the vector errors), and returns it with its
// defaults applied (K 10), K, Ef and Fusion.Depth clamped to MaxQueryK,
// and its resolved mode.
func CheckQuery(name string, cfg CollectionConfig, q Query) (Query, Mode, error) {
	cfg = cfg.withDefaults()
	mode := q.Mode
	if mode == ModeAuto {
		switch {
		case q.Vector != nil && q.Text != "":
			mode = ModeHybrid
		case q.Text != "":
			mode = ModeText
		default:
			mode = ModeVector
		}
	}
	switch mode {
	case ModeVector, ModeText, ModeHybrid:
	default:
		return q, "", fmt.Errorf("%w: unknown mode %q (want vector, text or hybrid)", ErrBadQuery, mode)
	}
	if mode != ModeText || q.Vector != nil {
		if err := checkVector(cfg, q.Vector); err != nil {
			return q, "", fmt.Errorf("query: %w", err)
		}
	}
	if mode != ModeVector && cfg.Text.Disabled {
		return q, "", fmt.Errorf("%w: collection %q has no full-text index (its config disables it)", ErrBadQuery, name)
	}
	f := q.Fusion
	switch {
	case q.K < 0:
		return q, "", fmt.Errorf("%w: k is %d", ErrBadQuery, q.K)
	case q.Ef < 0:
		return q, "", fmt.Errorf("%w: ef is %d", ErrBadQuery, q.Ef)
	case q.MinSimilarity != nil && math.IsNaN(float64(*q.MinSimilarity)):
		return q, "", fmt.Errorf("%w: minimum similarity is NaN", ErrBadQuery)
	case q.MinSimilarity != nil && q.Vector == nil:
		return q, "", fmt.Errorf("%w: a minimum similarity needs a query vector", ErrBadQuery)
	case f.Method != "" && f.Method != FusionRRF && f.Method != FusionWeighted:
		return q, "", fmt.Errorf("%w: unknown fusion method %q (want rrf or weighted)", ErrBadQuery, f.Method)
	case f.RRFK < 0 || f.Depth < 0:
		return q, "", fmt.Errorf("%w: fusion k %d, depth %d", ErrBadQuery, f.RRFK, f.Depth)
	case !(f.VectorWeight >= 0 && f.VectorWeight < 1):
		return q, "", fmt.Errorf("%w: fusion vector weight %v, want [0, 1)", ErrBadQuery, f.VectorWeight)
	}
	if q.BM25 != nil {
		if err := q.BM25.validate(); err != nil {
			return q, "", fmt.Errorf("%w: %v", ErrBadQuery, err)
		}
	}
	if nb := q.Neighbors; nb != nil {
		switch {
		case mode == ModeVector:
			return q, "", fmt.Errorf("%w: neighbours spread text and hybrid scores; a vector query has none to spread", ErrBadQuery)
		case nb.Position == "":
			return q, "", fmt.Errorf("%w: neighbours need a position field", ErrBadQuery)
		case !(nb.Weight > 0 && nb.Weight <= 1):
			return q, "", fmt.Errorf("%w: neighbour weight %v, want (0, 1]", ErrBadQuery, nb.Weight)
		case nb.Window < 0 || nb.Window > 16:
			return q, "", fmt.Errorf("%w: neighbour window %d, want 0..16", ErrBadQuery, nb.Window)
		}
	}
	if q.K == 0 {
		q.K = 10
	}
	// Clamped, so that no arithmetic on them can overflow: no collection
	// holds more records than MaxQueryK.
	q.K, q.Ef, q.Fusion.Depth = min(q.K, MaxQueryK), min(q.Ef, MaxQueryK), min(q.Fusion.Depth, MaxQueryK)
	return q, mode, nil
}

// MaxQueryK bounds a query's K, Ef and fusion depth: larger values are
// taken as MaxQueryK (2^30), more records than any collection holds, so
// a query asking for "everything" with math.MaxInt gets everything.
const MaxQueryK = 1 << 30

// TextTerms returns what the full-text index of a collection with config
// cfg holds for a record with this content and metadata (in its stored
// form: as decoded from the JSON CheckRecord returns): the distinct terms
// of its text, sorted, each with its frequency, and the text's length in
// terms. A config that disables the full-text index gives none.
func TextTerms(cfg CollectionConfig, content string, meta map[string]any) (terms []string, freqs []int, length int) {
	if cfg.Text.Disabled {
		return nil, nil, 0
	}
	d := analyzeDoc(textOf(content, meta, cfg.Text.Fields))
	terms = make([]string, len(d.terms))
	freqs = make([]int, len(d.terms))
	for i, t := range d.terms {
		terms[i], freqs[i] = t.term, int(t.tf)
	}
	return terms, freqs, int(d.length)
}

// BM25IDF is the inverse document frequency of a term in df of n
// documents, in the non-negative form the full-text index scores with
// (Lucene's): ln(1 + (n - df + 0.5) / (df + 0.5)).
func BM25IDF(n, df int) float64 { return idf(n, df) }

// WithDefaults returns c with the documented defaults of its zero fields
// applied, as CreateCollection stores it and Collection.Config returns it.
func (c CollectionConfig) WithDefaults() CollectionConfig { return c.withDefaults() }

// Equal reports whether c and o define the same collection (defaults
// applied to both): what CreateCollection compares with the config of an
// existing collection of the same name.
func (c CollectionConfig) Equal(o CollectionConfig) bool {
	return c.withDefaults().equal(o.withDefaults())
}
