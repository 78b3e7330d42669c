//go:build !windows

package coderhnsw

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"testing"
	"testing/iotest"

	"github.com/mnemodb/mnemo/index"
)

// build returns an index holding clustered vectors, some deleted, under
// metric.
func build(t *testing.T, metric index.Metric, n int) *Index {
	t.Helper()
	r := newRand(t, 99)
	idx, err := New(16, metric, &Options{M: 6})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range clustered(r, n, 16, 4) {
		if err := idx.Add(uint64(i)*3, v); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 7 {
		idx.Delete(uint64(i) * 3)
	}
	return idx
}

func snapshot(t *testing.T, idx index.Index) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := idx.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v (buffer %d)", n, err, buf.Len())
	}
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, metric := range []index.Metric{index.Cosine, index.Dot, index.L2} {
		t.Run(metric.String(), func(t *testing.T) {
			idx := build(t, metric, 300)
			back, err := Read(bytes.NewReader(snapshot(t, idx)))
			if err != nil {
				t.Fatal(err)
			}
			if back.Len() != idx.Len() || back.Dim() != idx.Dim() || back.Metric() != idx.Metric() {
				t.Fatalf("reloaded Len/Dim/Metric %d/%d/%v, want %d/%d/%v",
					back.Len(), back.Dim(), back.Metric(), idx.Len(), idx.Dim(), idx.Metric())
			}
			if back.g.M != 6 || back.efSearch != index.DefaultEfSearch {
				t.Fatalf("reloaded M %d, EfSearch %d", back.g.M, back.efSearch)
			}
			// Read rebuilds the graph (and coder/hnsw picks entry points
			// by map order), so results are not promised to be identical:
			// only their number.
			r := newRand(t, 5)
			for _, q := range clustered(r, 30, 16, 4) {
				a, _ := idx.Search(nil, q, 10, &index.SearchOptions{Ef: 50})
				b, err := back.Search(nil, q, 10, &index.SearchOptions{Ef: 50})
				if err != nil || len(b) != len(a) {
					t.Fatalf("search after reload: %d results, %v", len(b), err)
				}
			}
			for _, k := range idx.Keys(nil) {
				a, _ := idx.Vector(nil, k)
				b, ok := back.Vector(nil, k)
				if !ok || fmt.Sprint(a) != fmt.Sprint(b) {
					t.Fatalf("vector %d differs after reload", k)
				}
			}
			if fmt.Sprint(back.Keys(nil)) != fmt.Sprint(idx.Keys(nil)) {
				t.Fatal("keys differ after reload")
			}
		})
	}
}

// TestSnapshotLayout pins the header of the format drawn in snapshot.go.
func TestSnapshotLayout(t *testing.T) {
	idx, _ := New(2, index.L2, &Options{M: 5, EfSearch: 33})
	idx.Add(9, []float32{1, 2})
	idx.Add(4, []float32{3, 4})
	b := snapshot(t, idx)
	le := binary.LittleEndian
	if want := headerSize + 4 + 2*(8+2*4) + 4; len(b) != want {
		t.Fatalf("snapshot of %d bytes, want %d", len(b), want)
	}
	if string(b[:8]) != "MNEMOCDR" || le.Uint16(b[8:]) != 1 || b[10] != byte(index.L2) || b[11] != 0 ||
		le.Uint32(b[12:]) != 2 || le.Uint64(b[16:]) != 2 || le.Uint32(b[24:]) != 5 || le.Uint32(b[28:]) != 33 {
		t.Fatalf("header % x", b[:headerSize])
	}
	sum := func(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }
	if le.Uint32(b[headerSize:]) != sum(b[:headerSize]) || le.Uint32(b[len(b)-4:]) != sum(b[:len(b)-4]) {
		t.Fatal("checksums do not cover what the format says")
	}
	if first := b[headerSize+4:]; le.Uint64(first) != 4 { // records in key order
		t.Fatalf("first record's key %d, want 4", le.Uint64(first))
	}
}

// TestSnapshotCorruption flips every byte and truncates at every length of
// a small snapshot: each damaged copy must fail with a corruption error,
// never panic and never load.
func TestSnapshotCorruption(t *testing.T) {
	good := snapshot(t, build(t, index.Cosine, 25))
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x5a
		if _, err := Read(bytes.NewReader(bad)); !index.IsCorruption(err) {
			t.Fatalf("flipped byte %d of %d: err = %v, want corruption", i, len(good), err)
		}
	}
	for n := 0; n < len(good); n++ {
		if _, err := Read(bytes.NewReader(good[:n])); !index.IsCorruption(err) {
			t.Fatalf("truncated to %d of %d: err = %v, want corruption", n, len(good), err)
		}
	}
}

// TestSnapshotHostileHeader claims a huge count with a valid header
// checksum: the reader must fail on the missing data without allocating
// for the claim.
func TestSnapshotHostileHeader(t *testing.T) {
	idx, _ := New(4, index.L2, nil)
	idx.Add(1, []float32{1, 2, 3, 4})
	hdr := bytes.Clone(snapshot(t, idx)[:headerSize])
	binary.LittleEndian.PutUint64(hdr[16:], maxCount)
	hostile := binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(hdr, castagnoli))
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := Read(bytes.NewReader(hostile)); !index.IsCorruption(err) {
			t.Fatalf("err = %v, want corruption", err)
		}
	})
	if allocs > 100 {
		t.Fatalf("hostile header caused %v allocations", allocs)
	}
	binary.LittleEndian.PutUint64(hdr[16:], maxCount+1)
	hostile = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(hdr, castagnoli))
	if _, err := Read(bytes.NewReader(hostile)); !index.IsCorruption(err) {
		t.Fatalf("count beyond the bound: err = %v, want corruption", err)
	}
}

// TestSnapshotOtherBackends checks that the formats do not mix: index.Read
// refuses a coder snapshot and Read refuses the snapshots of package index,
// both as corruption.
func TestSnapshotOtherBackends(t *testing.T) {
	if _, err := index.Read(bytes.NewReader(snapshot(t, build(t, index.L2, 20)))); !index.IsCorruption(err) {
		t.Fatalf("index.Read of a coder snapshot: err = %v, want corruption", err)
	}
	h, _ := index.NewHNSW(16, index.L2, nil)
	f, _ := index.NewFlat(16, index.L2)
	for name, other := range map[string]index.Index{"hnsw": h, "flat": f} {
		other.Add(1, make([]float32, 16))
		if _, err := Read(bytes.NewReader(snapshot(t, other))); !index.IsCorruption(err) {
			t.Errorf("Read of a %s snapshot: err = %v, want corruption", name, err)
		}
	}
}

// TestSnapshotReadError checks that an error of the reader other than an
// early end is returned as itself, not as corruption.
func TestSnapshotReadError(t *testing.T) {
	good := snapshot(t, build(t, index.L2, 20))
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(good[:len(good)/2]), iotest.ErrReader(boom))
	if _, err := Read(r); !errors.Is(err, boom) || index.IsCorruption(err) {
		t.Fatalf("err = %v, want the reader's error", err)
	}
}
