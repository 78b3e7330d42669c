//go:build !windows

package coderhnsw

import (
	"bytes"
	"math"
	"testing"

	"github.com/mnemodb/mnemo/index"
)

// FuzzSnapshot feeds arbitrary bytes to Read: it must never panic, and a
// snapshot it accepts must answer searches and write itself back.
func FuzzSnapshot(f *testing.F) {
	for _, metric := range []index.Metric{index.Cosine, index.L2} {
		idx, _ := New(3, metric, &Options{M: 2})
		for i := 0; i < 12; i++ {
			idx.Add(uint64(i), []float32{float32(i%4) + 1, float32(i / 4), float32(i%3) - 1})
		}
		idx.Delete(3)
		var buf bytes.Buffer
		idx.WriteTo(&buf)
		f.Add(buf.Bytes())
	}
	f.Add([]byte("MNEMOCDR"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := Read(bytes.NewReader(data))
		if err != nil {
			if !index.IsCorruption(err) {
				t.Fatalf("error %v is not a corruption error", err)
			}
			return
		}
		q := make([]float32, idx.Dim())
		for i := range q {
			q[i] = float32(math.Sin(float64(i + 1)))
		}
		if _, err := idx.Search(nil, q, 5, nil); err != nil {
			t.Fatalf("search on a loaded snapshot: %v", err)
		}
		var buf bytes.Buffer
		if _, err := idx.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := Read(&buf)
		if err != nil || again.Len() != idx.Len() {
			t.Fatalf("rewrite of an accepted snapshot: %v", err)
		}
	})
}
