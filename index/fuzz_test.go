package index

import (
	"bytes"
	"math"
	"testing"
)

// FuzzOps decodes a stream of operations (add, replace, delete, search,
// compact) from the fuzz input, applies it to an HNSW and to the flat index
// as the model, and checks after every operation that the invariants hold,
// the sizes agree, and a search with ef >= n returns exactly what the model
// returns.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 2, 20, 0, 3, 30, 3, 0, 0, 1, 2, 0, 4, 0, 0})
	f.Add(bytes.Repeat([]byte{0, 7, 3, 0, 9, 4, 1, 7, 0, 3, 1, 1, 4, 0, 0}, 20))
	f.Add([]byte{0, 1, 1, 0, 1, 1, 0, 1, 1, 2, 1, 0, 4, 0, 0, 3, 5, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		const dim = 4
		metric := []Metric{Cosine, Dot, L2}[len(data)%3]
		h, _ := NewHNSW(dim, metric, &HNSWOptions{M: 2 + len(data)%5, EfConstruction: 8})
		model, _ := NewFlat(dim, metric)
		vec := make([]float32, dim)
		for len(data) >= 3 {
			op, key, arg := data[0]%5, uint64(data[1]%32), data[2]
			data = data[3:]
			switch op {
			case 0, 1: // add or replace; the vector comes from arg and key
				for i := range vec {
					vec[i] = float32(int(arg>>(2*i))&3) - 1.5 + float32(key%3)*0.25*float32(i)
				}
				errH, errM := h.Add(key, vec), model.Add(key, vec)
				if (errH == nil) != (errM == nil) {
					t.Fatalf("Add: hnsw %v, model %v", errH, errM)
				}
			case 2:
				if a, b := h.Delete(key), model.Delete(key); a != b {
					t.Fatalf("Delete(%d): hnsw %v, model %v", key, a, b)
				}
			case 3:
				for i := range vec {
					vec[i] = float32(int8(arg+byte(17*i))) / 16
				}
				vec[0] += 0.5
				k := 1 + int(key%8)
				got, errH := h.Search(nil, vec, k, &SearchOptions{Ef: model.Len() + 1})
				want, errM := model.Search(nil, vec, k, nil)
				if (errH == nil) != (errM == nil) || !sameResults(got, want) {
					t.Fatalf("Search k=%d: hnsw %v %v, model %v %v", k, got, errH, want, errM)
				}
			case 4:
				h.Compact()
			}
			if h.Len() != model.Len() {
				t.Fatalf("Len: hnsw %d, model %d", h.Len(), model.Len())
			}
			mustCheck(t, h)
		}
	})
}

// FuzzSnapshot feeds arbitrary bytes to Read: it must never panic, and a
// snapshot it accepts must satisfy the invariants and answer searches.
func FuzzSnapshot(f *testing.F) {
	for _, metric := range []Metric{Cosine, L2} {
		h, _ := NewHNSW(3, metric, &HNSWOptions{M: 2})
		fl, _ := NewFlat(3, metric)
		for i := 0; i < 12; i++ {
			v := []float32{float32(i%4) + 1, float32(i / 4), float32(i%3) - 1}
			for _, idx := range []Index{h, fl} {
				idx.Add(uint64(i), v)
			}
		}
		h.Delete(3)
		for _, idx := range []Index{h, fl} {
			var buf bytes.Buffer
			idx.WriteTo(&buf)
			f.Add(buf.Bytes())
		}
	}
	f.Add([]byte("MNEMOHNS"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := Read(bytes.NewReader(data))
		if err != nil {
			if !IsCorruption(err) {
				t.Fatalf("error %v is not a corruption error", err)
			}
			return
		}
		if h, ok := idx.(*HNSW); ok {
			mustCheck(t, h)
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
