package index

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// buildAll returns one index of each backend holding the same vectors, some
// deleted, under metric.
func buildAll(t *testing.T, metric Metric, n int) map[string]Index {
	t.Helper()
	r := newRand(t, 99)
	vecs := clustered(r, n, 16, 4)
	h, _ := NewHNSW(16, metric, &HNSWOptions{M: 6, EfConstruction: 40})
	q, _ := NewHNSW(16, metric, &HNSWOptions{M: 6, EfConstruction: 40, Quantize: SQ8})
	f, _ := NewFlat(16, metric)
	out := map[string]Index{"hnsw": h, "hnsw-sq8": q, "flat": f}
	for _, idx := range out {
		for i, v := range vecs {
			if err := idx.Add(uint64(i)*3, v); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i += 7 {
			idx.Delete(uint64(i) * 3)
		}
	}
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, metric := range []Metric{Cosine, Dot, L2} {
		for name, idx := range buildAll(t, metric, 300) {
			t.Run(fmt.Sprintf("%s/%s", name, metric), func(t *testing.T) {
				var buf bytes.Buffer
				n, err := idx.WriteTo(&buf)
				if err != nil || n != int64(buf.Len()) {
					t.Fatalf("WriteTo = %d, %v (buffer %d)", n, err, buf.Len())
				}
				back, err := Read(bytes.NewReader(buf.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				if back.Len() != idx.Len() || back.Dim() != idx.Dim() || back.Metric() != idx.Metric() {
					t.Fatalf("reloaded Len/Dim/Metric %d/%d/%v, want %d/%d/%v",
						back.Len(), back.Dim(), back.Metric(), idx.Len(), idx.Dim(), idx.Metric())
				}
				if h, ok := back.(*HNSW); ok {
					mustCheck(t, h)
				}
				r := newRand(t, 5)
				for _, q := range clustered(r, 30, 16, 4) {
					a, _ := idx.Search(nil, q, 10, &SearchOptions{Ef: 50})
					b, err := back.Search(nil, q, 10, &SearchOptions{Ef: 50})
					if err != nil || len(b) != len(a) {
						t.Fatalf("search after reload: %d results, %v", len(b), err)
					}
					if fmt.Sprint(a) != fmt.Sprint(b) {
						t.Fatalf("results differ after reload:\n%v\n%v", a, b)
					}
				}
				for _, k := range idx.Keys(nil) {
					a, _ := idx.Vector(nil, k)
					b, ok := back.Vector(nil, k)
					if !ok || fmt.Sprint(a) != fmt.Sprint(b) {
						t.Fatalf("vector %d differs after reload", k)
					}
				}
			})
		}
	}
}

// TestSnapshotCorruption flips every byte and truncates at every length of
// small snapshots: each damaged copy must fail with a corruption error,
// never panic and never load.
func TestSnapshotCorruption(t *testing.T) {
	for name, idx := range buildAll(t, Cosine, 25) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := idx.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			good := buf.Bytes()
			for i := range good {
				bad := bytes.Clone(good)
				bad[i] ^= 0x5a
				if _, err := Read(bytes.NewReader(bad)); !IsCorruption(err) {
					t.Fatalf("flipped byte %d of %d: err = %v, want corruption", i, len(good), err)
				}
			}
			for n := 0; n < len(good); n++ {
				if _, err := Read(bytes.NewReader(good[:n])); !IsCorruption(err) {
					t.Fatalf("truncated to %d of %d: err = %v, want corruption", n, len(good), err)
				}
			}
		})
	}
}

// TestSnapshotHostileHeader claims huge counts with a valid header
// checksum: the reader must fail on the missing data without allocating
// for the claim.
func TestSnapshotHostileHeader(t *testing.T) {
	h, _ := NewHNSW(4, L2, nil)
	h.Add(1, []float32{1, 2, 3, 4})
	var buf bytes.Buffer
	h.WriteTo(&buf)
	hdr := bytes.Clone(buf.Bytes()[:hnswHeaderSize-4])
	// nodes = 2^31 - 2, entry 0.
	copy(hdr[40:44], []byte{0xfe, 0xff, 0xff, 0x7f})
	cw := newCRCWriter(io.Discard)
	cw.write(hdr)
	sum := cw.crc.Sum32()
	hostile := append(hdr, byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24))
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := ReadHNSW(bytes.NewReader(hostile)); !IsCorruption(err) {
			t.Fatalf("err = %v, want corruption", err)
		}
	})
	if allocs > 100 {
		t.Fatalf("hostile header caused %v allocations", allocs)
	}
	if _, err := Read(bytes.NewReader([]byte("NOTANIDX........"))); !IsCorruption(err) {
		t.Fatalf("unknown magic: %v", err)
	}
	if _, err := Read(bytes.NewReader(nil)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty input: %v", err)
	}
}

// TestSnapshotAllocs: writing and reading a snapshot allocate per index,
// not per node (a per-vector scratch buffer once cost 256 B a node).
func TestSnapshotAllocs(t *testing.T) {
	h := buildAll(t, L2, 2000)["hnsw"].(*HNSW)
	var buf bytes.Buffer
	if _, err := h.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	buf.Grow(2 * buf.Len())
	if n := testing.AllocsPerRun(3, func() {
		buf.Reset()
		h.WriteTo(&buf)
	}); n > 20 {
		t.Errorf("WriteTo of %d nodes: %v allocations", h.Len(), n)
	}
	snap := buf.Bytes()
	if n := testing.AllocsPerRun(3, func() { ReadHNSW(bytes.NewReader(snap)) }); n > 1000 {
		t.Errorf("ReadHNSW of %d nodes: %v allocations", h.Len(), n)
	}
}
