package index

import (
	"fmt"
	"math"
	"strings"

	"github.com/mnemodb/mnemo/simd"
)

// Quantization selects how an HNSW index holds the vectors its searches
// walk the graph on.
type Quantization uint8

const (
	// NoQuantization walks the graph on the float32 vectors.
	NoQuantization Quantization = 0
	// SQ8 is scalar quantization to 8 bits per dimension with a scale and
	// an offset per vector: v[i] ~ offset + scale*code[i], the codes
	// spanning the vector's own minimum to maximum. A search walks layer 0
	// on the codes (a quarter of the vector's bytes), then re-ranks the
	// ef candidates it found by their float32 distances, which the index
	// keeps too; Vector, the exact plans and construction use the float32
	// vectors.
	SQ8 Quantization = 1
)

// String returns "none" or "sq8".
func (q Quantization) String() string {
	switch q {
	case NoQuantization:
		return "none"
	case SQ8:
		return "sq8"
	}
	return fmt.Sprintf("Quantization(%d)", uint8(q))
}

// ParseQuantization parses "" or "none", and "sq8".
func ParseQuantization(s string) (Quantization, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return NoQuantization, nil
	case "sq8":
		return SQ8, nil
	}
	return 0, fmt.Errorf("%w: unknown quantization %q (want none or sq8)", ErrInvalidOptions, s)
}

func (q Quantization) valid() bool { return q <= SQ8 }

// Per-node code metadata, in chunk.cmeta: three float32s.
const (
	cmScale  = 0 // code step
	cmOffset = 1 // value of code 0
	cmNorm2  = 2 // squared norm of the decoded vector (for L2)
	cmWords  = 3
)

// codeLen is the length of a node's code row: the dimension rounded up to
// the kernel's step of 8, the padding codes zero.
func codeLen(dim int) int { return (dim + 7) &^ 7 }

// encode writes the codes and metadata of node id from its stored vector.
func (h *HNSW) encode(ch *chunk, off uint32, v []float32) {
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	scale := (hi - lo) / 255
	codes := ch.codes[int(off)*h.dpad:][:h.dpad]
	var norm2 float64
	for i, x := range v {
		c := uint8(0)
		if scale > 0 {
			c = uint8(math.Round(float64((x - lo) / scale)))
		}
		codes[i] = c
		y := float64(lo) + float64(scale)*float64(c)
		norm2 += y * y
	}
	clear(codes[len(v):])
	m := ch.cmeta[int(off)*cmWords:][:cmWords]
	m[cmScale], m[cmOffset], m[cmNorm2] = scale, lo, float32(norm2)
}

// codes returns the code row of node id.
func (h *HNSW) codes(id uint32) []uint8 {
	ch, off := h.loc(id)
	lo := int(off) * h.dpad
	return ch.codes[lo : lo+h.dpad : lo+h.dpad]
}

// prepareCodes readies s for scoring code rows against s.q: the query
// padded to the code length, its sum and squared norm.
func (h *HNSW) prepareCodes(s *searcher) {
	s.qpad = append(s.qpad[:0], s.q...)
	for len(s.qpad) < h.dpad {
		s.qpad = append(s.qpad, 0)
	}
	var sum, n2 float32
	for _, x := range s.q {
		sum += x
		n2 += x * x
	}
	s.qsum, s.qnorm2 = sum, n2
}

// scoreCodes returns the approximate distances from the prepared query to
// the nodes ids, whose code rows are crows, in s.dists, with one kernel
// call.
func (h *HNSW) scoreCodes(s *searcher, ids []uint32, crows [][]uint8) []float32 {
	if cap(s.dists) < len(crows) {
		s.dists = make([]float32, max(len(crows), h.m0+1))
	}
	dists := s.dists[:len(crows)]
	simd.DotCodesRows(dists, s.qpad, crows)
	for i, id := range ids {
		ch, off := h.loc(id)
		m := ch.cmeta[int(off)*cmWords:][:cmWords]
		dot := m[cmOffset]*s.qsum + m[cmScale]*dists[i]
		switch h.metric {
		case L2:
			dists[i] = s.qnorm2 - 2*dot + m[cmNorm2]
		case Dot:
			dists[i] = -dot
		default:
			dists[i] = 1 - dot
		}
	}
	return dists
}

// codeDistance is scoreCodes for one node.
func (h *HNSW) codeDistance(s *searcher, id uint32) float32 {
	ids := [1]uint32{id}
	rows := [1][]uint8{h.codes(id)}
	return h.scoreCodes(s, ids[:], rows[:])[0]
}

// rerank replaces the approximate distances of the walk's results in s.res
// by float32 ones and keeps the k nearest.
func (h *HNSW) rerank(s *searcher, k int) {
	ids, rows := s.batch[:0], s.rows[:0]
	for _, it := range s.res {
		ids, rows = append(ids, it.id), append(rows, h.vec(it.id))
	}
	s.batch, s.rows = ids, rows
	s.res = s.res[:0]
	for i, d := range h.score(s, s.q, rows) {
		s.res.offer(k, d, ids[i])
	}
}
