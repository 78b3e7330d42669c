package bench

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/index"
)

func TestSyntheticIsDeterministicWithExactTruth(t *testing.T) {
	p := SyntheticParams{N: 500, Queries: 20, Dim: 8, Clusters: 5, Seed: 7, Metric: index.L2}
	a, b := Synthetic(p), Synthetic(p)
	if !reflect.DeepEqual(a.Base, b.Base) || !reflect.DeepEqual(a.Truth, b.Truth) {
		t.Fatal("the same parameters gave different sets")
	}
	flat, _ := index.NewFlat(8, index.L2)
	for i, v := range a.Base {
		flat.Add(uint64(i), v)
	}
	for qi, q := range a.Queries {
		res, _ := flat.Search(nil, q, 10, nil)
		for j, r := range res {
			if d := Distance(index.L2, q, a.Base[a.Truth[qi][j]]); d != r.Distance {
				t.Fatalf("query %d rank %d: truth distance %v, exact %v", qi, j, d, r.Distance)
			}
		}
	}
}

func TestParseSynthetic(t *testing.T) {
	p, err := ParseSynthetic("n=1000,dim=16,clusters=4,seed=9,queries=10")
	if err != nil || p.N != 1000 || p.Dim != 16 || p.Clusters != 4 || p.Seed != 9 || p.Queries != 10 {
		t.Fatalf("%+v, %v", p, err)
	}
	for _, bad := range []string{"n", "n=x", "m=3", "n=0"} {
		if _, err := ParseSynthetic(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestRunSmall(t *testing.T) {
	ds := Synthetic(SyntheticParams{N: 2000, Queries: 50, Dim: 16, Clusters: 8, Seed: 1, Metric: index.Cosine})
	rows, err := Run(ds, Config{Efs: []int{10, 100}, Threads: 2, Snapshot: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 5 // hnsw x2, flat x1, coder x2
	if _, err := NewBackend("coder", 4, index.L2, &Config{}); errors.Is(err, ErrUnavailable) {
		want = 3 // skipped on this platform
	}
	if len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r.Backend == "flat" && r.Recall != 1 {
			t.Fatalf("flat recall %v", r.Recall)
		}
		if r.Backend == "hnsw" && r.Ef == 100 && r.Recall < 0.95 {
			t.Fatalf("hnsw recall at ef 100: %v", r.Recall)
		}
		if r.QPS <= 0 || r.BuildVPS <= 0 || r.BytesPerVector <= 0 || r.SnapshotLoadS <= 0 {
			t.Fatalf("row with empty measurements: %+v", r)
		}
	}
	if tab := Table(rows); !strings.Contains(tab, "recall") || strings.Count(tab, "\n") != want+1 {
		t.Fatalf("table:\n%s", tab)
	}
	if _, err := NewBackend("ivf", 4, index.L2, &Config{}); err == nil {
		t.Fatal("unknown backend accepted")
	}
}
