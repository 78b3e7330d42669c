package vecio

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	vecs := [][]float32{{1, 2, 3}, {-1, 0.5, 1e-7}}
	var buf bytes.Buffer
	if err := WriteFvecs(&buf, vecs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFvecs(bytes.NewReader(buf.Bytes()), 0)
	if err != nil || !reflect.DeepEqual(got, vecs) {
		t.Fatalf("fvecs: %v, %v", got, err)
	}
	if got, _ := ReadFvecs(bytes.NewReader(buf.Bytes()), 1); len(got) != 1 {
		t.Fatalf("limit 1 read %d", len(got))
	}
	ids := [][]int32{{4, 5}, {0, -1}}
	buf.Reset()
	if err := WriteIvecs(&buf, ids); err != nil {
		t.Fatal(err)
	}
	gotIDs, err := ReadIvecs(&buf, 0)
	if err != nil || !reflect.DeepEqual(gotIDs, ids) {
		t.Fatalf("ivecs: %v, %v", gotIDs, err)
	}
	bv, err := ReadBvecs(bytes.NewReader([]byte{2, 0, 0, 0, 7, 255}), 0)
	if err != nil || !reflect.DeepEqual(bv, [][]float32{{7, 255}}) {
		t.Fatalf("bvecs: %v, %v", bv, err)
	}
}

func TestMalformed(t *testing.T) {
	tests := map[string][]byte{
		"truncated header":   {3, 0},
		"truncated record":   {3, 0, 0, 0, 1, 2, 3, 4},
		"zero dimension":     {0, 0, 0, 0},
		"negative dimension": {255, 255, 255, 255},
		"huge dimension":     {0, 0, 0, 127},
		"changing dimension": {1, 0, 0, 0, 0, 0, 128, 63, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadFvecs(bytes.NewReader(data), 0); !errors.Is(err, ErrFormat) {
				t.Fatalf("got %v, want ErrFormat", err)
			}
		})
	}
}
