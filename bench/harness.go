// Package bench measures mnemo's index backends side by side on the same
// data: build rate, memory per vector, recall@k against exact ground truth,
// queries per second on one and on several goroutines, latency percentiles,
// and snapshot write and load times. The `go test -bench` suites in this
// package and the `mnemo bench ann` command both run through it.
package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemodb/mnemo/index"
)

// Config selects what a run measures.
type Config struct {
	Backends []string // "hnsw", "flat", "coder" (not on windows: see ErrUnavailable)
	K        int      // neighbours per query, default 10
	Efs      []int    // ef sweep, default 10..320
	M        int      // HNSW M, default 16
	EfC      int      // HNSW efConstruction, default 200
	Threads  int      // goroutines for the parallel build and query runs, default GOMAXPROCS
	Queries  int      // use at most this many queries (0: all)
	Snapshot bool     // also time snapshot write and load (the queries then run on the loaded index)
	// Quantize is the HNSW backend's quantization (index.SQ8: walk on
	// 8-bit codes, re-rank with float32); zero for none.
	Quantize index.Quantization
	// BuildProgress, when set, is called during each build with how many
	// of the total vectors were added (about every 1,000, and at the
	// end), from the building goroutines: it must be safe for concurrent
	// use.
	BuildProgress func(backend string, done, total int)
}

func (c *Config) defaults() {
	if len(c.Backends) == 0 {
		c.Backends = []string{"hnsw", "flat", "coder"}
	}
	if c.K == 0 {
		c.K = 10
	}
	if len(c.Efs) == 0 {
		c.Efs = []int{10, 20, 40, 80, 160, 320}
	}
	if c.M == 0 {
		c.M = index.DefaultM
	}
	if c.EfC == 0 {
		c.EfC = index.DefaultEfConstruction
	}
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
}

// Row is one backend at one ef. Field names are the JSON schema of
// `mnemo bench ann --json`.
type Row struct {
	Backend        string  `json:"backend"`
	Ef             int     `json:"ef"`
	K              int     `json:"k"`
	Recall         float64 `json:"recall"`
	QPS            float64 `json:"qps"`
	QPSParallel    float64 `json:"qps_parallel"`
	P50us          float64 `json:"p50_us"`
	P99us          float64 `json:"p99_us"`
	BuildS         float64 `json:"build_s"`
	BuildVPS       float64 `json:"build_vps"`
	BytesPerVector float64 `json:"bytes_per_vector"`
	SnapshotWriteS float64 `json:"snapshot_write_s,omitempty"`
	SnapshotLoadS  float64 `json:"snapshot_load_s,omitempty"`
	N              int     `json:"n"`
	Dim            int     `json:"dim"`
	Metric         string  `json:"metric"`
	Threads        int     `json:"threads"`
}

// NewBackend returns an empty index of the named backend. A backend this
// platform lacks yields an error wrapping ErrUnavailable.
func NewBackend(name string, dim int, metric index.Metric, c *Config) (index.Index, error) {
	switch name {
	case "hnsw":
		return index.NewHNSW(dim, metric, &index.HNSWOptions{M: c.M, EfConstruction: c.EfC, Quantize: c.Quantize})
	case "flat":
		return index.NewFlat(dim, metric)
	case "coder":
		return newCoder(dim, metric, c)
	}
	return nil, fmt.Errorf("unknown backend %q (want hnsw, flat or coder)", name)
}

// Build adds every base vector (key = position) on the given number of
// goroutines and returns the elapsed time.
func Build(idx index.Index, base [][]float32, threads int) (time.Duration, error) {
	return build(idx, base, threads, nil)
}

// buildReportEvery is how many vectors a build adds between two reports.
const buildReportEvery = 1000

// build is Build that calls report(done) as it goes, when report is set.
func build(idx index.Index, base [][]float32, threads int, report func(done int)) (time.Duration, error) {
	start := time.Now()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, threads)
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(base) {
					return
				}
				if err := idx.Add(uint64(i), base[i]); err != nil {
					errs <- err
					return
				}
				if d := done.Add(1); report != nil && d%buildReportEvery == 0 && d < int64(len(base)) {
					report(int(d))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	took, err := time.Since(start), <-errs
	if report != nil && err == nil {
		report(len(base)) // once, after every add finished
	}
	return took, err
}

// Recall returns the mean recall@k of results against the first k ids of
// each ground-truth row.
func Recall(results [][]index.Result, truth [][]int32, k int) float64 {
	var sum float64
	for i, res := range results {
		want := truth[i][:min(k, len(truth[i]))]
		hit := 0
		for _, r := range res {
			if slices.Contains(want, int32(r.Key)) {
				hit++
			}
		}
		sum += float64(hit) / float64(len(want))
	}
	return sum / float64(len(results))
}

// measurePasses is how many times Measure times the single-goroutine run,
// keeping the fastest pass: the first pass also warms caches and the
// searchers' pools, and a shared machine slows some passes. The hnswlib
// harness beside which these runs are read does the same (best of 3).
const measurePasses = 3

// Measure runs every query measurePasses times on one goroutine, for recall
// (from the first pass) and for latency and throughput (from the fastest),
// and then once on threads goroutines (for throughput). Result storage is
// allocated before the timed runs, so they time searches only.
func Measure(idx index.Index, queries [][]float32, k, ef, threads int) (results [][]index.Result, qps, qpsPar, p50, p99 float64, err error) {
	opts := &index.SearchOptions{Ef: ef}
	results = make([][]index.Result, len(queries))
	backing := make([]index.Result, len(queries)*k)
	for i := range results {
		results[i] = backing[i*k : i*k : (i+1)*k]
	}
	lat, best := make([]time.Duration, len(queries)), make([]time.Duration, len(queries))
	bestTotal := time.Duration(math.MaxInt64)
	scratch := make([]index.Result, 0, k)
	for pass := 0; pass < measurePasses; pass++ {
		start := time.Now()
		for i, q := range queries {
			t0 := time.Now()
			if pass == 0 {
				results[i], err = idx.Search(results[i], q, k, opts)
			} else {
				scratch, err = idx.Search(scratch, q, k, opts)
			}
			lat[i] = time.Since(t0)
			if err != nil {
				return
			}
		}
		if total := time.Since(start); total < bestTotal {
			bestTotal = total
			copy(best, lat)
		}
	}
	qps = float64(len(queries)) / bestTotal.Seconds()
	slices.Sort(best)
	p50 = float64(best[len(best)/2].Nanoseconds()) / 1e3
	p99 = float64(best[min(len(best)-1, len(best)*99/100)].Nanoseconds()) / 1e3

	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]index.Result, 0, k)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(queries) {
					return
				}
				dst, _ = idx.Search(dst, queries[i], k, opts)
			}
		}()
	}
	wg.Wait()
	qpsPar = float64(len(queries)) / time.Since(start).Seconds()
	return
}

// Run builds each backend on ds and measures it at every ef of the sweep
// (an exact backend once, ef 0). A backend not available on this platform
// is skipped, with a line on progress.
func Run(ds *Dataset, c Config, progress io.Writer) ([]Row, error) {
	c.defaults()
	queries := ds.Queries
	if c.Queries > 0 && c.Queries < len(queries) {
		queries = queries[:c.Queries]
	}
	var rows []Row
	for _, name := range c.Backends {
		idx, err := NewBackend(name, ds.Dim(), ds.Metric, &c)
		if errors.Is(err, ErrUnavailable) {
			logf(progress, "%s: skipped: %v", name, err)
			continue
		}
		if err != nil {
			return nil, err
		}
		logf(progress, "%s: building %d x %d on %d goroutines", name, len(ds.Base), ds.Dim(), c.Threads)
		var report func(int)
		if c.BuildProgress != nil {
			report = func(done int) { c.BuildProgress(name, done, len(ds.Base)) }
		}
		took, err := build(idx, ds.Base, c.Threads, report)
		if err != nil {
			return nil, fmt.Errorf("%s: build: %w", name, err)
		}
		base := Row{
			Backend: name, K: c.K, N: len(ds.Base), Dim: ds.Dim(), Metric: ds.Metric.String(), Threads: c.Threads,
			BuildS: took.Seconds(), BuildVPS: float64(len(ds.Base)) / took.Seconds(),
			BytesPerVector: float64(idx.MemoryBytes()) / float64(len(ds.Base)),
		}
		if c.Snapshot {
			base.SnapshotWriteS, base.SnapshotLoadS, err = timeSnapshot(name, &idx)
			if err != nil {
				return nil, fmt.Errorf("%s: snapshot: %w", name, err)
			}
		}
		efs := c.Efs
		if name == "flat" {
			efs = []int{0}
		}
		for _, ef := range efs {
			res, qps, qpsPar, p50, p99, err := Measure(idx, queries, c.K, ef, c.Threads)
			if err != nil {
				return nil, fmt.Errorf("%s ef=%d: %w", name, ef, err)
			}
			row := base
			row.Ef, row.Recall, row.QPS, row.QPSParallel, row.P50us, row.P99us = ef, Recall(res, ds.Truth, c.K), qps, qpsPar, p50, p99
			logf(progress, "%s ef=%d recall@%d=%.4f qps=%.0f", name, ef, c.K, row.Recall, qps)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// timeSnapshot writes *idx, of the named backend, to a temporary file, lets
// it go, and loads the file back into *idx, which the queries then run on.
// Writing to a file rather than to memory, and never holding the built and
// the loaded index at once, keeps the process's peak memory that of one
// index (a million 128-d vectors: about 0.7 GB less for the buffer and
// 0.7 GB less for the second index).
func timeSnapshot(name string, idx *index.Index) (write, load float64, err error) {
	f, err := os.CreateTemp("", "mnemo-bench-*.snap")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	t0 := time.Now()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err = (*idx).WriteTo(w); err == nil {
		err = w.Flush()
	}
	if err != nil {
		return 0, 0, err
	}
	write = time.Since(t0).Seconds()
	if _, err = f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	// Two collections: an HNSW stays reachable through the runtime's list
	// of sync.Pools (its searcher pool) until the second one after it is
	// dropped.
	*idx = nil
	runtime.GC()
	runtime.GC()
	t0 = time.Now()
	if *idx, err = readBackend(name, bufio.NewReaderSize(f, 1<<20)); err != nil {
		return 0, 0, err
	}
	load = time.Since(t0).Seconds()
	return write, load, nil
}

// readBackend restores a snapshot of the named backend.
func readBackend(name string, r io.Reader) (index.Index, error) {
	if name == "coder" {
		return readCoder(r) // index.Read does not know its format
	}
	return index.Read(r)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// Table renders rows as a fixed-width text table.
func Table(rows []Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-7s %5s %8s %10s %10s %9s %9s %9s %10s %8s\n",
		"backend", "ef", "recall", "q/s", "q/s(par)", "p50 us", "p99 us", "build s", "build v/s", "B/vec")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-7s %5d %8.4f %10.0f %10.0f %9.1f %9.1f %9.2f %10.0f %8.0f\n",
			r.Backend, r.Ef, r.Recall, r.QPS, r.QPSParallel, r.P50us, r.P99us, r.BuildS, r.BuildVPS, r.BytesPerVector)
	}
	return b.String()
}
