package index_test

import (
	"bytes"
	"fmt"

	"github.com/mnemodb/mnemo/index"
)

func ExampleHNSW() {
	h, err := index.NewHNSW(2, index.L2, nil) // nil options: M=16, efConstruction=200
	if err != nil {
		panic(err)
	}
	points := map[uint64][]float32{1: {0, 0}, 2: {1, 0}, 3: {0, 1}, 4: {5, 5}}
	for key, v := range points {
		if err := h.Add(key, v); err != nil {
			panic(err)
		}
	}
	res, err := h.Search(nil, []float32{0.9, 0.1}, 2, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Printf("key %d at squared distance %.2f\n", r.Key, r.Distance)
	}
	// Output:
	// key 2 at squared distance 0.02
	// key 1 at squared distance 0.82
}

func ExampleSearchOptions_filter() {
	h, _ := index.NewHNSW(2, index.Cosine, nil)
	for key := uint64(1); key <= 6; key++ {
		h.Add(key, []float32{1, float32(key) / 10})
	}
	even := func(key uint64) bool { return key%2 == 0 }
	res, _ := h.Search(nil, []float32{1, 0.1}, 2, &index.SearchOptions{Filter: even})
	fmt.Println(res[0].Key, res[1].Key)
	// An exact scan over an allow-list, the plan for very selective filters:
	res, _ = h.Search(nil, []float32{1, 0.1}, 2, &index.SearchOptions{Keys: []uint64{5, 6}})
	fmt.Println(res[0].Key, res[1].Key)
	// Output:
	// 2 4
	// 5 6
}

func ExampleHNSW_Compact() {
	h, _ := index.NewHNSW(1, index.L2, nil)
	for key := uint64(0); key < 10; key++ {
		h.Add(key, []float32{float32(key)})
	}
	h.Delete(3)
	h.Delete(4)
	fmt.Println(h.Len(), h.Deleted())
	fmt.Println(h.Compact(), h.Deleted(), h.Check())
	res, _ := h.Search(nil, []float32{3.4}, 1, nil)
	fmt.Println(res[0].Key)
	// Output:
	// 8 2
	// 2 0 <nil>
	// 2
}

func ExampleRead() {
	h, _ := index.NewHNSW(3, index.Cosine, nil)
	h.Add(7, []float32{1, 2, 3})
	h.Add(8, []float32{-1, 0, 1})
	var snap bytes.Buffer
	if _, err := h.WriteTo(&snap); err != nil {
		panic(err)
	}
	back, err := index.Read(&snap)
	if err != nil {
		panic(err)
	}
	res, _ := back.Search(nil, []float32{1, 2, 3}, 1, nil)
	fmt.Printf("%T with %d keys; nearest %d\n", back, back.Len(), res[0].Key)
	// Output: *index.HNSW with 2 keys; nearest 7
}

func ExampleFlat() {
	f, _ := index.NewFlat(2, index.Dot)
	f.Add(1, []float32{1, 0})
	f.Add(2, []float32{3, 3})
	res, _ := f.Search(nil, []float32{1, 1}, 2, nil)
	fmt.Println(res)
	// Output: [{2 -6} {1 -1}]
}

func ExampleSQ8() {
	// Walk the graph on 8-bit codes; the float32 vectors re-rank the
	// candidates, so the distances returned are exact.
	h, _ := index.NewHNSW(4, index.L2, &index.HNSWOptions{Quantize: index.SQ8})
	h.Add(1, []float32{0, 0, 0, 0})
	h.Add(2, []float32{1, 2, 3, 4})
	h.Add(3, []float32{4, 3, 2, 1})
	res, _ := h.Search(nil, []float32{1, 2, 3, 3.5}, 2, nil)
	for _, r := range res {
		fmt.Printf("key %d at squared distance %.2f\n", r.Key, r.Distance)
	}
	// Output:
	// key 2 at squared distance 0.25
	// key 3 at squared distance 17.25
}

func ExampleSearchOptions_exact() {
	h, _ := index.NewHNSW(2, index.L2, nil)
	for key := uint64(1); key <= 5; key++ {
		h.Add(key, []float32{float32(key), 0})
	}
	// Score every live key instead of walking the graph.
	res, _ := h.Search(nil, []float32{3.2, 0}, 2, &index.SearchOptions{Exact: true})
	fmt.Println(res[0].Key, res[1].Key)
	// Output:
	// 3 4
}
