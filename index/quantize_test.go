package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
				q8, _ := NewHNSW(dim, metric, &HNSWOptions{Quantize: SQ8, EfConstruction: 100})
				fl, _ := NewHNSW(dim, metric, &HNSWOptions{EfConstruction: 100})
				model, _ := NewFlat(dim, metric)
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
				var rq, rf float64
				queries := clustered(r, 60, dim, 10)
				for _, q := range queries {
					want, _ := model.Search(nil, q, 10, nil)
					got, err := q8.Search(nil, q, 10, &SearchOptions{Ef: len(vecs)})
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
				if rq < rf-0.01 {
					t.Fatalf("sq8 recall %.3f, float32 %.3f: more than 0.01 apart", rq, rf)
				}
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
