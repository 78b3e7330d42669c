package mnemo

import (
	"fmt"
	"math"
)

// The checks every backend applies at its API boundary, so that each
// refuses exactly what the others refuse, with the same sentinel errors.

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
	if err := CheckVector(cfg, r.Vector); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return meta, nil
}

// CheckQuery validates q for the collection name with config cfg as Query
// does (ErrBadQuery, and the vector errors), and returns it with its
// defaults applied (K 10), K, Ef and Fusion.Depth clamped to MaxQueryK,
// and its resolved mode.
func CheckQuery(name string, cfg CollectionConfig, q Query) (Query, Mode, error) {
	cfg = cfg.WithDefaults()
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
		if err := CheckVector(cfg, q.Vector); err != nil {
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
	if nb := q.Spread; nb != nil {
		switch {
		case mode == ModeVector:
			return q, "", fmt.Errorf("%w: score spreading applies to text and hybrid queries; a vector query has no scores to spread", ErrBadQuery)
		case nb.Position == "":
			return q, "", fmt.Errorf("%w: spread needs a position field", ErrBadQuery)
		case !(nb.Weight > 0 && nb.Weight <= 1):
			return q, "", fmt.Errorf("%w: spread weight %v, want (0, 1]", ErrBadQuery, nb.Weight)
		case nb.Window < 0 || nb.Window > MaxSpreadWindow:
			return q, "", fmt.Errorf("%w: spread window %d, want 0..%d", ErrBadQuery, nb.Window, MaxSpreadWindow)
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
