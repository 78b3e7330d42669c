package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"testing"
)

func TestParseQuantization(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Quantization
		ok   bool
	}{{"", NoQuantization, true}, {"none", NoQuantization, true}, {"SQ8", SQ8, true}, {"pq", 0, false}} {
		got, err := ParseQuantization(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseQuantization(%q) = %v, %v", tt.in, got, err)
		}
		if !tt.ok && !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("ParseQuantization(%q): error %v does not wrap ErrInvalidOptions", tt.in, err)
		}
	}
	if _, err := NewHNSW(4, L2, &HNSWOptions{Quantize: 9}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("Quantize 9: err %v, want ErrInvalidOptions", err)
	}
	if SQ8.String() != "sq8" || NoQuantization.String() != "none" {
		t.Error("String")
	}
}

// TestSQ8 checks a quantized index against the flat model: with ef >= n the
// walk reaches every node and the float32 re-ranking makes the answer
// exact; at a small ef its recall stays within 0.01 of the float32 graph's
// on the same vectors, for every metric and dimensions that are and are
// not multiples of the kernel's step.
func TestSQ8(t *testing.T) {
	for _, metric := range []Metric{Cosine, Dot, L2} {
		for _, dim := range []int{5, 16, 37} {
			t.Run(fmt.Sprintf("%s/d=%d", metric, dim), func(t *testing.T) {
				r := newRand(t, uint64(dim)*3+uint64(metric))
				vecs := clustered(r, sized(1500), dim, 10)
				q8, fl, model := sq8Trio(dim, metric, 100)
				for i, v := range vecs {
					for _, idx := range []Index{q8, fl, model} {
						if err := idx.Add(uint64(i), v); err != nil {
							t.Fatal(err)
						}
					}
				}
				for i := 0; i < len(vecs); i += 5 {
					q8.Delete(uint64(i))
					fl.Delete(uint64(i))
					model.Delete(uint64(i))
				}
				mustCheck(t, q8)
				compareSQ8(t, q8, fl, model, clustered(r, 200, dim, 10), len(vecs), 0.01)
			})
		}
	}
}

// TestSnapshotVersion1Loads rewrites a snapshot as version 1 (the reserved
// byte where version 2 keeps the quantization) and checks that it loads
// and answers identically, and that version 1 with a quantization byte is
// corrupt.
func TestSnapshotVersion1Loads(t *testing.T) {
	h := buildAll(t, L2, 300)["hnsw"].(*HNSW)
	var buf bytes.Buffer
	if _, err := h.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	asVersion := func(version, quant byte) []byte {
		b := bytes.Clone(buf.Bytes())
		b[8], b[11] = version, quant
		crc := crc32.MakeTable(crc32.Castagnoli)
		binary.LittleEndian.PutUint32(b[hnswHeaderSize-4:], crc32.Checksum(b[:hnswHeaderSize-4], crc))
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc))
		return b
	}
	back, err := Read(bytes.NewReader(asVersion(1, 0)))
	if err != nil {
		t.Fatalf("version 1: %v", err)
	}
	q := make([]float32, 16)
	a, _ := h.Search(nil, q, 10, nil)
	b, _ := back.Search(nil, q, 10, nil)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("version 1 answers differently:\n%v\n%v", a, b)
	}
	for _, bad := range [][2]byte{{1, 1}, {3, 0}, {2, 7}} {
		if _, err := Read(bytes.NewReader(asVersion(bad[0], bad[1]))); !IsCorruption(err) {
			t.Errorf("version %d, quantization %d: err %v, want corruption", bad[0], bad[1], err)
		}
	}
}

// TestSQ8Ranges checks how an SQ8 index learns its per-dimension ranges
// while it grows, on data that drifts out of the ranges it first learned:
// after every Add, either no vector has been clipped since the last
// training or fewer vectors have been added since than it encoded; searches stay exact
// at ef >= n and close to the float32 graph's recall at a small ef; and
// once WriteTo has trained on everything, every code decodes to within
// half a step of its component.
func TestSQ8Ranges(t *testing.T) {
	const dim = 12
	r := newRand(t, 41)
	n := sized(2000)
	q8, fl, model := sq8Trio(dim, L2, 64)
	vecs := clustered(r, n, dim, 8)
	for i, v := range vecs {
		// Each stretch of the data lies farther out than the last, so
		// the ranges learned early clip what comes later.
		for j := range v {
			v[j] = v[j]*float32(1+i/200) + float32(i/100)
		}
		for _, idx := range []Index{q8, fl, model} {
			if err := idx.Add(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
		if q8.retrainDue() {
			t.Fatalf("after %d adds: a clipped vector and %d added since a training of %d", i+1, q8.sq.added.Load(), q8.sq.trainedN.Load())
		}
	}
	if q8.sq.trainedN.Load() < uint32(n)/2 {
		t.Fatalf("last trained at %d of %d nodes: the drift should have retrained past half", q8.sq.trainedN.Load(), n)
	}
	mustCheck(t, q8)
	compareSQ8(t, q8, fl, model, vecs[:60], n, 0.02)

	if _, err := q8.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	if q8.sq.clipped.Load() || q8.sq.trainedN.Load() != q8.nodes.Load() {
		t.Fatalf("after WriteTo: clipped %v, trained at %d of %d", q8.sq.clipped.Load(), q8.sq.trainedN.Load(), q8.nodes.Load())
	}
	for id := uint32(0); id < q8.nodes.Load(); id++ {
		c := q8.codes(id)
		for i, x := range q8.vec(id) {
			got := q8.sq.lo[i] + q8.sq.step[i]*float32(c[i])
			if d := math.Abs(float64(got - x)); d > float64(q8.sq.step[i])*0.501+1e-6 {
				t.Fatalf("node %d dim %d: %g decodes to %g, step %g", id, i, x, got, q8.sq.step[i])
			}
		}
	}
}

// TestSQ8Extremes: components near the float32 limit, which L2 and Dot
// accept, overflow the folded query; such a search walks the float32
// vectors instead, and answers match the flat model's exactly at ef >= n.
func TestSQ8Extremes(t *testing.T) {
	for _, metric := range []Metric{L2, Dot} {
		q8, _ := NewHNSW(4, metric, &HNSWOptions{Quantize: SQ8})
		model, _ := NewFlat(4, metric)
		vecs := [][]float32{{3e38, -3e38, 1, 0}, {-3e38, 3e38, 0, 1}, {1, 2, 3, 4}, {-1, -2, -3, -4}, {0, 0, 1e-30, 0}, {2e38, 2e38, -2e38, 0}, {1e19, -1e19, 3e18, 0}, {-1e19, 0, 1e19, 2e18}}
		for i, v := range vecs {
			q8.Add(uint64(i), v)
			model.Add(uint64(i), v)
		}
		mustCheck(t, q8)
		for _, q := range append(vecs, []float32{0.5, 0.5, 0.5, 0.5}) {
			want, _ := model.Search(nil, q, 3, nil)
			got, err := q8.Search(nil, q, 3, &SearchOptions{Ef: len(vecs)})
			if err != nil || !sameResults(got, want) {
				t.Fatalf("%s query %v: %v\n got %v\nwant %v", metric, q, err, got, want)
			}
		}
	}
}

// compareSQ8 checks an SQ8 index against the flat model (answers exact at
// ef >= n) and its recall@10 at ef=16 against the float32 graph's on the
// same vectors, which it may trail by at most slack.
func compareSQ8(t *testing.T, q8, fl *HNSW, model *Flat, queries [][]float32, n int, slack float64) {
	t.Helper()
	var rq, rf float64
	for _, q := range queries {
		want, _ := model.Search(nil, q, 10, nil)
		got, err := q8.Search(nil, q, 10, &SearchOptions{Ef: n})
		if err != nil || !sameResults(got, want) {
			t.Fatalf("ef >= n: %v\n got %v\nwant %v", err, got, want)
		}
		a, _ := q8.Search(nil, q, 10, &SearchOptions{Ef: 16})
		b, _ := fl.Search(nil, q, 10, &SearchOptions{Ef: 16})
		rq += recall(a, want)
		rf += recall(b, want)
	}
	rq, rf = rq/float64(len(queries)), rf/float64(len(queries))
	t.Logf("recall@10 at ef=16: sq8 %.3f, float32 %.3f", rq, rf)
	if rq < rf-slack {
		t.Fatalf("sq8 recall %.3f, float32 %.3f: more than %.2f apart", rq, rf, slack)
	}
}

// TestSQ8Offset: L2 data whose components share a large offset (every one
// near 1,000) must not cost SQ8 recall. Quantizing the query about zero
// lost the differences between vectors to the offset (recall@10 0.05);
// about the ranges' midpoints it matches the float32 graph's.
func TestSQ8Offset(t *testing.T) {
	const dim = 32
	r := newRand(t, 77)
	n := sized(2000)
	q8, fl, model := sq8Trio(dim, L2, 64)
	gen := func() []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(1000 + r.NormFloat64())
		}
		return v
	}
	for i := range n {
		v := gen()
		for _, idx := range []Index{q8, fl, model} {
			if err := idx.Add(uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
	}
	queries := make([][]float32, 100)
	for i := range queries {
		queries[i] = gen()
	}
	compareSQ8(t, q8, fl, model, queries, n, 0.02)
}

// TestSQ8ReusedSlots: vectors added into slots that Compact released count
// toward retraining like vectors in new slots. Almost everything is
// deleted and compacted away, and the new vectors lie outside the ranges
// learned from the old: without a retraining their codes are all clipped
// and recall collapses (it was 0.009 against float32's 0.930).
func TestSQ8ReusedSlots(t *testing.T) {
	const dim = 16
	r := newRand(t, 78)
	n := sized(2000)
	q8, fl, model := sq8Trio(dim, L2, 64)
	add := func(key int, shift float64) []float32 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(shift + r.NormFloat64())
		}
		for _, idx := range []Index{q8, fl, model} {
			if err := idx.Add(uint64(key), v); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	for i := range n {
		add(i, 0)
	}
	for i := 10; i < n; i++ {
		for _, idx := range []Index{q8, fl, model} {
			idx.Delete(uint64(i))
		}
	}
	q8.Compact()
	fl.Compact()
	var queries [][]float32
	for i := n; i < 2*n-10; i++ {
		if v := add(i, 20); i%20 == 0 {
			queries = append(queries, v)
		}
	}
	if q8.nodes.Load() != uint32(n) {
		t.Fatalf("%d nodes: the re-adds should have reused the %d released slots", q8.nodes.Load(), n-10)
	}
	mustCheck(t, q8)
	compareSQ8(t, q8, fl, model, queries, n, 0.02)
}

// sq8Trio returns an SQ8 HNSW, a float32 HNSW with the same options, and
// the flat model, all empty.
func sq8Trio(dim int, metric Metric, efC int) (q8, fl *HNSW, model *Flat) {
	q8, _ = NewHNSW(dim, metric, &HNSWOptions{Quantize: SQ8, EfConstruction: efC})
	fl, _ = NewHNSW(dim, metric, &HNSWOptions{EfConstruction: efC})
	model, _ = NewFlat(dim, metric)
	return q8, fl, model
}

// TestSQ8Spill checks the re-ranking of displaced results below ef 2k: the
// walk is the same with it or without, so every query's results can only
// get nearer (element-wise, sorted), some must, and filtered or deleted
// keys never come back through it. From ef 2k up it changes nothing.
func TestSQ8Spill(t *testing.T) {
	defer func(v bool) { spillRerank = v }(spillRerank)
	const dim, k = 48, 10
	r := newRand(t, 11)
	vecs := clustered(r, sized(6000), dim, 4)
	h, err := NewHNSW(dim, Cosine, &HNSWOptions{M: 8, EfConstruction: 64, Quantize: SQ8})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if err := h.Add(uint64(i), v); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < len(vecs); i += 7 {
		h.Delete(uint64(i))
	}
	queries := clustered(r, 300, dim, 4)
	search := func(q []float32, ef int, spill bool, filter func(uint64) bool) []Result {
		spillRerank = spill
		res, err := h.Search(nil, q, k, &SearchOptions{Ef: ef, Filter: filter})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	odd := func(key uint64) bool { return key%2 == 1 }
	for _, filter := range []func(uint64) bool{nil, odd} {
		better := 0
		for qi, q := range queries {
			for _, ef := range []int{1, k, 2*k - 1} {
				off, on := search(q, ef, false, filter), search(q, ef, true, filter)
				if len(on) != len(off) {
					t.Fatalf("query %d ef %d: %d results with the spill, %d without", qi, ef, len(on), len(off))
				}
				for i := range on {
					if on[i].Distance > off[i].Distance+1e-6 {
						t.Fatalf("query %d ef %d: result %d at %v with the spill, %v without", qi, ef, i, on[i].Distance, off[i].Distance)
					}
					if on[i].Distance < off[i].Distance-1e-6 {
						better++
					}
					if on[i].Key%7 == 0 || filter != nil && !filter(on[i].Key) {
						t.Fatalf("query %d ef %d: key %d is deleted or filtered out", qi, ef, on[i].Key)
					}
				}
			}
			if a, b := search(q, 2*k, false, filter), search(q, 2*k, true, filter); !slices.Equal(a, b) {
				t.Fatalf("query %d ef 2k: %v with the spill, %v without", qi, b, a)
			}
		}
		if better == 0 {
			t.Errorf("filter %v: the spill never brought a nearer result", filter != nil)
		}
		t.Logf("filter %v: %d nearer results", filter != nil, better)
	}
}
