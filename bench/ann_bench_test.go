package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/index"
)

// Datasets for the benchmarks:
//
//   - "synthetic": a clustered cosine set made in-process (20,000 x 128,
//     100 clusters, seed 1), always available;
//   - "annset": the directory named by MNEMO_ANN_DIR, holding base.fvecs,
//     query.fvecs and groundtruth.ivecs as written by the synthetic-set tool
//     (go run ../shared/tools/annset/main.go -n 100000 -q 1000 -dim 128
//     -clusters 100 -seed 1 -out DIR), cosine;
//   - "siftsmall": ../shared/data/siftsmall (TEXMEX ANN_SIFT10K, L2) when
//     present.
//
// Built indexes are cached per dataset and backend for the life of the
// process, so the query benchmarks time searches only.
func datasets(b *testing.B) []*Dataset {
	b.Helper()
	var out []*Dataset
	out = append(out, syntheticSet())
	if dir := os.Getenv("MNEMO_ANN_DIR"); dir != "" {
		ds, err := loadCached("annset", func() (*Dataset, error) {
			ds, err := LoadDir(dir, index.Cosine)
			if err == nil {
				ds.Name = "annset"
			}
			return ds, err
		})
		if err != nil {
			b.Fatalf("MNEMO_ANN_DIR: %v", err)
		}
		out = append(out, ds)
	}
	if ds, err := siftSmall(); err == nil {
		out = append(out, ds)
	} else if !os.IsNotExist(err) {
		b.Fatal(err)
	}
	return out
}

var syntheticSet = sync.OnceValue(func() *Dataset {
	ds := Synthetic(SyntheticParams{N: 20000, Queries: 500, Dim: 128, Clusters: 100, Seed: 1, Metric: index.Cosine})
	ds.Name = "synthetic"
	return ds
})

// siftSmallDir is where the TEXMEX siftsmall files are looked for, relative
// to this package's directory.
const siftSmallDir = "../../shared/data/siftsmall"

func siftSmall() (*Dataset, error) {
	dir := siftSmallDir
	if _, err := os.Stat(filepath.Join(dir, "siftsmall_base.fvecs")); err != nil {
		return nil, err
	}
	return loadCached("siftsmall", func() (*Dataset, error) {
		return LoadTexmex("siftsmall", filepath.Join(dir, "siftsmall_base.fvecs"),
			filepath.Join(dir, "siftsmall_query.fvecs"), filepath.Join(dir, "siftsmall_groundtruth.ivecs"), index.L2)
	})
}

var cache struct {
	sync.Mutex
	sets    map[string]*Dataset
	indexes map[string]builtIndex
}

type builtIndex struct {
	idx   index.Index
	build time.Duration
}

func loadCached(name string, load func() (*Dataset, error)) (*Dataset, error) {
	cache.Lock()
	defer cache.Unlock()
	if ds, ok := cache.sets[name]; ok {
		return ds, nil
	}
	ds, err := load()
	if err != nil {
		return nil, err
	}
	if cache.sets == nil {
		cache.sets = map[string]*Dataset{}
	}
	cache.sets[name] = ds
	return ds, nil
}

// newBackend returns an empty index of backend with M=16,
// efConstruction=200, and skips the benchmark when this platform lacks the
// backend. "hnsw-sq8" is the native HNSW with SQ8 quantization.
func newBackend(b *testing.B, ds *Dataset, backend string) index.Index {
	b.Helper()
	c := &Config{M: 16, EfC: 200}
	if backend == "hnsw-sq8" {
		backend, c.Quantize = "hnsw", index.SQ8
	}
	idx, err := NewBackend(backend, ds.Dim(), ds.Metric, c)
	if errors.Is(err, ErrUnavailable) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	return idx
}

// built returns the dataset's index for backend, built once on one
// goroutine with M=16, efConstruction=200.
func built(b *testing.B, ds *Dataset, backend string) builtIndex {
	b.Helper()
	key := ds.Name + "/" + backend
	cache.Lock()
	defer cache.Unlock()
	if bi, ok := cache.indexes[key]; ok {
		return bi
	}
	idx := newBackend(b, ds, backend)
	took, err := Build(idx, ds.Base, 1)
	if err != nil {
		b.Fatal(err)
	}
	if cache.indexes == nil {
		cache.indexes = map[string]builtIndex{}
	}
	bi := builtIndex{idx, took}
	cache.indexes[key] = bi
	return bi
}

var efSweep = []int{10, 20, 40, 80, 160, 320}

// BenchmarkQuery reports recall@10 and single-goroutine queries/s for every
// backend (the native HNSW on float32 and on SQ8 codes, the flat index,
// coder/hnsw) at every ef of the sweep (the flat index once), on every
// dataset.
func BenchmarkQuery(b *testing.B) {
	for _, ds := range datasets(b) {
		for _, backend := range []string{"hnsw", "hnsw-sq8", "flat", "coder"} {
			efs := efSweep
			if backend == "flat" {
				efs = []int{0}
			}
			for _, ef := range efs {
				b.Run(fmt.Sprintf("%s/%s/ef=%d", ds.Name, backend, ef), func(b *testing.B) {
					idx := built(b, ds, backend).idx
					opts := &index.SearchOptions{Ef: ef}
					res := make([][]index.Result, len(ds.Queries))
					for i, q := range ds.Queries {
						res[i], _ = idx.Search(nil, q, 10, opts)
					}
					dst := make([]index.Result, 0, 10)
					i := 0
					b.ResetTimer()
					for b.Loop() {
						dst, _ = idx.Search(dst, ds.Queries[i%len(ds.Queries)], 10, opts)
						i++
					}
					b.ReportMetric(Recall(res, ds.Truth, 10), "recall@10")
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
				})
			}
		}
	}
}

// BenchmarkBuild reports vectors/s and bytes/vector for a full build on one
// and on two goroutines (M=16, efConstruction=200).
func BenchmarkBuild(b *testing.B) {
	for _, ds := range datasets(b) {
		for _, backend := range []string{"hnsw", "flat", "coder"} {
			for _, threads := range []int{1, 2} {
				if backend == "coder" && threads > 1 {
					continue // coder/hnsw serialises writes
				}
				b.Run(fmt.Sprintf("%s/%s/threads=%d", ds.Name, backend, threads), func(b *testing.B) {
					var bytesPer float64
					for b.Loop() {
						idx := newBackend(b, ds, backend)
						if _, err := Build(idx, ds.Base, threads); err != nil {
							b.Fatal(err)
						}
						bytesPer = float64(idx.MemoryBytes()) / float64(len(ds.Base))
					}
					b.ReportMetric(float64(b.N*len(ds.Base))/b.Elapsed().Seconds(), "vectors/s")
					b.ReportMetric(bytesPer, "B/vector")
				})
			}
		}
	}
}

// BenchmarkSnapshot reports the time to write and to load an HNSW snapshot,
// and the ratio of the single-goroutine build time to the load time. It
// fails if the loaded index answers any query differently.
func BenchmarkSnapshot(b *testing.B) {
	for _, ds := range datasets(b) {
		b.Run(ds.Name, func(b *testing.B) {
			bi := built(b, ds, "hnsw")
			var buf bytes.Buffer
			var load time.Duration
			for b.Loop() {
				buf.Reset()
				if _, err := bi.idx.WriteTo(&buf); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				back, err := index.Read(bytes.NewReader(buf.Bytes()))
				load += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				for _, q := range ds.Queries[:min(100, len(ds.Queries))] {
					want, _ := bi.idx.Search(nil, q, 10, nil)
					got, _ := back.Search(nil, q, 10, nil)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						b.Fatalf("loaded index answers differently:\n%v\n%v", got, want)
					}
				}
			}
			perLoad := load / time.Duration(b.N)
			b.ReportMetric(perLoad.Seconds(), "load-s")
			b.ReportMetric(bi.build.Seconds(), "build-s")
			b.ReportMetric(bi.build.Seconds()/perLoad.Seconds(), "build/load")
			b.ReportMetric(float64(buf.Len())/float64(len(ds.Base)), "snapshot-B/vector")
		})
	}
}
