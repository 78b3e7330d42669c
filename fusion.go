package mnemo

import "math"

// FusionDepth returns how many candidates each side of a hybrid query for
// k hits retrieves under f: f.Depth, or max(k, DefaultFusionDepth) when it
// is zero.
func FusionDepth(f Fusion, k int) int {
	if f.Depth > 0 {
		return f.Depth
	}
	return max(k, DefaultFusionDepth)
}

// FuseScores sets the Score of each candidate of a hybrid query as every
// backend does, by f's method (see FusionWeighted and FusionRRF, with their
// defaults for zero fields). Each candidate must carry its VectorRank and
// Similarity when the vector side found it, and its TextRank and
// TextScore when the text side did (ranks from 1). Order the hits with
// SortHits afterwards. Every backend fuses with it, so that hybrid scores
// agree; f must be valid (as CheckQuery checks it).
func FuseScores(hits []Hit, f Fusion) {
	w := f.VectorWeight
	if w == 0 {
		w = DefaultVectorWeight
	}
	for i := range hits {
		hits[i].Score = 0
	}
	switch f.Method {
	case FusionWeighted, "":
		vlo, vhi := minMax(hits, func(h *Hit) (float64, bool) { return float64(h.Similarity), h.VectorRank > 0 })
		tlo, thi := minMax(hits, func(h *Hit) (float64, bool) { return h.TextScore, h.TextRank > 0 })
		for i := range hits {
			h := &hits[i]
			if h.VectorRank > 0 {
				h.Score += w * unit(float64(h.Similarity), vlo, vhi)
			}
			if h.TextRank > 0 {
				h.Score += (1 - w) * unit(h.TextScore, tlo, thi)
			}
		}
	case FusionRRF:
		k := float64(f.RRFK)
		if k == 0 {
			k = 60
		}
		for i := range hits {
			h := &hits[i]
			if h.VectorRank > 0 {
				h.Score += w / (k + float64(h.VectorRank))
			}
			if h.TextRank > 0 {
				h.Score += (1 - w) / (k + float64(h.TextRank))
			}
		}
	}
}

func minMax(hits []Hit, val func(*Hit) (float64, bool)) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range hits {
		if v, ok := val(&hits[i]); ok {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi
}

// unit maps v from [lo, hi] to [0, 1]; a side whose candidates all score
// the same gives each 1.
func unit(v, lo, hi float64) float64 {
	if hi <= lo {
		return 1
	}
	return (v - lo) / (hi - lo)
}
