package index

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/mnemodb/mnemo/simd"
)

// Quantization selects how an HNSW index holds the vectors its searches
// walk the graph on.
type Quantization uint8

const (
	// NoQuantization walks the graph on the float32 vectors.
	NoQuantization Quantization = 0
	// SQ8 is scalar quantization to 8 bits per dimension: each dimension's
	// range over the index's vectors is cut into 255 steps, v[i] ~ lo[i] +
	// step[i]*code[i] (see sq8 for how the ranges are learned). A search
	// quantizes the query to signed bytes too and walks the graph on
	// integer inner products of the codes (a quarter of the vector's
	// bytes, 64 codes an instruction where the CPU has AVX-512 VNNI), then
	// re-ranks the ef candidates it found (below ef 2k, with the k it
	// displaced last) by their float32 distances, which the index keeps
	// too; Vector, the exact plans and construction
	// use the float32 vectors.
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

// codeLen is the length of a node's code row: the dimension rounded up to
// the code kernel's step of 16, the padding codes zero.
func codeLen(dim int) int { return (dim + 15) &^ 15 }

// The codes of an SQ8 index are per dimension: v[i] ~ lo[i] + step[i]*c[i],
// the range lo[i] .. lo[i]+255*step[i] being the minimum to the maximum of
// dimension i over the index's vectors. A vector's codes then carry no
// scale of their own, so scoring a code row needs nothing but the row, and
// a query folds the steps into itself once (see prepareCodes).
//
// An index that grows learns its ranges as it goes: it trains them on the
// vectors it holds (train), encodes each new vector with the ranges it
// has, clipping a component that falls outside them, and trains again, re-
// encoding every node, when a vector was clipped and as many vectors have
// been added since the last training as it encoded (new slots or slots
// that Compact released alike). Re-encoding is O(n*dim) under the index's
// exclusive lock and, by the doubling, at most twice the work of encoding
// every node once. WriteTo, ReadHNSW and Compact train on all the nodes, so
// a snapshot reloads to the same codes.
//
// Under L2 the code distances are taken about the ranges' midpoints
// (center): L2 does not change when both vectors are shifted, and without
// the shift a common offset in the data (every component near 1,000, say)
// would dominate the folded query, whose rounding to bytes would then lose
// the differences between vectors (recall@10 fell to 0.05 on such data).
// Under Dot and Cosine the center is zero.
type sq8 struct {
	lo, step []float32     // per dimension, codeLen(dim) long (padding zero)
	center   []float32     // per dimension: the range's midpoint under L2, else 0
	maxNorm2 float64       // the largest squared norm a centered code row can decode to
	trainedN atomic.Uint32 // vectors encoded by the last training
	added    atomic.Uint32 // vectors encoded since
	clipped  atomic.Bool   // one of those fell outside the ranges
}

// train sets the ranges from every stored vector (tombstoned ones too:
// they still route searches) and encodes every node again. The caller
// holds h.mu exclusively, or owns h outright.
func (h *HNSW) train() {
	q := &h.sq
	n := h.nodes.Load()
	lo, hi := q.lo[:h.dim], make([]float32, h.dim)
	first := true
	for id := uint32(0); id < n; id++ {
		if h.flags(id)&flagFree != 0 {
			continue
		}
		v := h.vec(id)
		if first {
			copy(lo, v)
			copy(hi, v)
			first = false
			continue
		}
		for i, x := range v {
			lo[i], hi[i] = min(lo[i], x), max(hi[i], x)
		}
	}
	q.maxNorm2 = 0
	for i := range lo {
		// In float64: hi-lo can overflow a float32, the step cannot.
		q.step[i] = float32((float64(hi[i]) - float64(lo[i])) / 255)
		if h.metric == L2 {
			q.center[i] = float32(float64(lo[i]) + 127.5*float64(q.step[i]))
		}
		a := float64(lo[i]) - float64(q.center[i])
		b := a + 255*float64(q.step[i])
		q.maxNorm2 += max(a*a, b*b)
	}
	encoded := uint32(0)
	for id := uint32(0); id < n; id++ {
		if h.flags(id)&flagFree == 0 {
			ch, off := h.loc(id)
			h.encode(ch, off, h.vec(id))
			encoded++
		}
	}
	q.trainedN.Store(encoded)
	q.added.Store(0)
	q.clipped.Store(false)
}

// retrainDue reports whether an Add should train the ranges again (see
// sq8): a vector was clipped and at least as many vectors have been added
// since the last training as it encoded.
func (h *HNSW) retrainDue() bool {
	return h.quant == SQ8 && h.sq.clipped.Load() && h.sq.added.Load() >= h.sq.trainedN.Load()
}

// retrain trains the ranges again if that is still due once the index is
// held exclusively (another Add may have done it meanwhile).
func (h *HNSW) retrain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.retrainDue() {
		h.train()
	}
}

// encode writes the codes of node id (and, under L2, the squared norm of
// the decoded vector about the center) from its stored vector.
func (h *HNSW) encode(ch *chunk, off uint32, v []float32) {
	codes := ch.codes[int(off)*h.dpad:][:h.dpad]
	lo, step, center := h.sq.lo, h.sq.step, h.sq.center
	var norm2 float64
	clipped := false
	for i, x := range v {
		c := 0.0
		if step[i] > 0 {
			c = math.Round((float64(x) - float64(lo[i])) / float64(step[i]))
		}
		if c < 0 || c > 255 || step[i] == 0 && x != lo[i] {
			clipped = true
			c = min(max(c, 0), 255)
		}
		codes[i] = uint8(c)
		y := float64(lo[i]) + float64(step[i])*c - float64(center[i])
		norm2 += y * y
	}
	clear(codes[len(v):])
	if h.metric == L2 {
		ch.cnorm[off] = float32(norm2)
	}
	if clipped && !h.sq.clipped.Load() {
		h.sq.clipped.Store(true)
	}
}

// codes returns the code row of node id.
func (h *HNSW) codes(id uint32) []uint8 {
	return unsafe.Slice((*uint8)(unsafe.Add(h.ref(id).codes, uintptr(id&h.chunkMask)*uintptr(h.dpad))), h.dpad)
}

// prepareCodes readies s for scoring code rows against s.q. With q and
// the rows taken about the center m (zero but under L2) and the steps
// folded in, (q-m).(v-m) = sum (q[i]-m[i])*(lo[i]-m[i]) + sum qf[i]*c[i],
// qf[i] = (q[i]-m[i])*step[i]; the first sum is a constant of the query
// (s.qlo) and qf is quantized to signed bytes, qf[i] ~ s.qscale*s.q8[i], so
// that a row scores in integers: (q-m).(v-m) ~ s.qlo + s.qscale*sum
// s.q8[i]*c[i]. s.qnorm2 is |q-m|^2. It reports false when a code distance
// could overflow a float32 (components near the float32 limit, which L2
// and Dot accept), and the search then walks the float32 vectors instead.
func (h *HNSW) prepareCodes(s *searcher) bool {
	lo, step, center := h.sq.lo, h.sq.step, h.sq.center
	var qlo, n2, peak float64
	for i, x := range s.q {
		qc := float64(x) - float64(center[i])
		qlo += qc * (float64(lo[i]) - float64(center[i]))
		n2 += qc * qc
		peak = max(peak, math.Abs(qc*float64(step[i])))
	}
	// Every term of a code distance, and so their sum, must stay finite:
	// |qlo|, the largest |qscale*sum| (peak*255 per dimension), the query's
	// and a row's squared norms.
	const limit = math.MaxFloat32 / 4
	if math.Abs(qlo)+peak*255*float64(h.dim) > limit || n2 > limit || h.sq.maxNorm2 > limit {
		return false
	}
	s.qlo, s.qnorm2, s.qscale = float32(qlo), float32(n2), float32(peak/127)
	if cap(s.q8) < h.dpad {
		s.q8 = make([]int8, h.dpad)
	}
	s.q8 = s.q8[:h.dpad]
	clear(s.q8)
	if peak == 0 {
		return true
	}
	for i, x := range s.q {
		qc := float64(x) - float64(center[i])
		s.q8[i] = int8(math.Round(qc * float64(step[i]) * 127 / peak))
	}
	return true
}

// scoreCodes returns the approximate distances from the prepared query to
// the nodes ids, whose code rows are crows, in s.dists, with one kernel
// call.
func (h *HNSW) scoreCodes(s *searcher, ids []uint32, crows [][]uint8) []float32 {
	if cap(s.dists) < len(crows) {
		s.dists = make([]float32, max(len(crows), 2*h.m0))
	}
	if cap(s.idots) < len(crows) {
		s.idots = make([]int32, max(len(crows), 2*h.m0))
	}
	dists, idots := s.dists[:len(crows)], s.idots[:len(crows)]
	simd.DotCodesI8(idots, s.q8, crows)
	switch h.metric {
	case L2:
		for i, id := range ids {
			ch, off := h.loc(id)
			dists[i] = s.qnorm2 - 2*(s.qlo+s.qscale*float32(idots[i])) + ch.cnorm[off]
		}
	case Dot:
		for i, x := range idots {
			dists[i] = -(s.qlo + s.qscale*float32(x))
		}
	default:
		for i, x := range idots {
			dists[i] = 1 - (s.qlo + s.qscale*float32(x))
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

// rerank replaces the approximate distances of the walk's results in s.res,
// and of the results it displaced last in s.spill, by float32 ones and
// keeps the k nearest.
func (h *HNSW) rerank(s *searcher, k int) {
	ids, rows := s.batch[:0], s.rows[:0]
	for _, it := range s.res {
		ids, rows = append(ids, it.id), append(rows, h.vec(it.id))
	}
	for _, it := range s.spill {
		ids, rows = append(ids, it.id), append(rows, h.vec(it.id))
	}
	s.batch, s.rows = ids, rows
	s.res = s.res[:0]
	for i, d := range h.score(s, s.q, rows) {
		s.res.offer(k, d, ids[i])
	}
}
