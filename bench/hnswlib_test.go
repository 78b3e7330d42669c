package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReadHnswlibResults(t *testing.T) {
	in := `{"system":"hnswlib","n":10000,"dim":128,"build_s":1.9,"build_vps":5244,"threads":1,"bytes_per_vector_main":656}
{"system":"hnswlib","ef":20,"recall":0.9810,"qps":41650}
{"system":"hnswlib","ef":10,"recall":0.9340,"qps":71304}
{"system":"mnemo","ef":10,"recall":0.941,"qps":39741,"build_vps":5267}

{"system":"hnswlib","n":10000,"dim":128,"build_s":2.0,"build_vps":5000,"threads":1,"bytes_per_vector_main":656}
{"system":"hnswlib","ef":10,"recall":0.9340,"qps":80000}
{"system":"hnswlib","ef":20,"recall":0.9810,"qps":40000}
`
	rows, err := ReadHnswlibResults(strings.NewReader(in), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Backend: "hnswlib", Ef: 10, K: 10, Recall: 0.934, QPS: 80000, BuildVPS: 5244, Threads: 1},
		{Backend: "hnswlib", Ef: 20, K: 10, Recall: 0.981, QPS: 41650, BuildVPS: 5244, Threads: 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %+v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, rows[i], want[i])
		}
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, append(rows, Row{Backend: "hnsw", Ef: 10, K: 10, Recall: 0.94, QPS: 50000}), "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), ">hnswlib<") {
		t.Error("the chart has no hnswlib series")
	}
	for _, bad := range []string{"not json\n", `{"system":"mnemo","ef":10,"recall":1,"qps":1}` + "\n"} {
		if _, err := ReadHnswlibResults(strings.NewReader(bad), 10); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: err %v, want ErrFormat", bad, err)
		}
	}
}
