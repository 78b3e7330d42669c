package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mnemodb/mnemo/bench"
	"github.com/mnemodb/mnemo/index"
)

// benchSubcommands maps each subcommand of "mnemo bench" to the function
// that runs it with the arguments after its name.
var benchSubcommands = map[string]func(ctx context.Context, args []string, out, stderr io.Writer) error{
	"ann": benchANN,
}

// benchCmd dispatches "mnemo bench SUBCOMMAND".
func benchCmd(ctx context.Context, args []string, out, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "mnemo bench: no subcommand\n"+benchUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(out, benchUsage)
		return nil
	}
	sub, ok := benchSubcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mnemo bench: unknown bench subcommand %q\n%s", args[0], benchUsage)
		return errUsage
	}
	return sub(ctx, args[1:], out, stderr)
}

// benchUsage lists the subcommands of "mnemo bench".
var benchUsage = `Usage: mnemo bench SUBCOMMAND [flags]

Subcommands:
  ann    measure the index backends: recall, queries/s, build rate, memory

Run "mnemo help bench ann" for its flags.
`

// benchANN measures the index backends on the user's data or a synthetic
// set: build rate, memory, recall@k, queries/s and latency per ef. The
// harness takes no context: once ctx is done, benchANN returns at once
// and leaves the loading or measuring to the process's exit (see await).
func benchANN(ctx context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("bench ann", out, stderr)
	base := fs.String("base", "", "the base vectors, a .fvecs or .bvecs `FILE`")
	queryF := fs.String("query", "", "the query vectors, a .fvecs or .bvecs `FILE`")
	gt := fs.String("gt", "", "the ground truth, an .ivecs `FILE` (default: computed exactly)")
	synth := fs.String("synthetic", "", "a synthetic clustered set instead of files, `SPEC` n=N,dim=D[,clusters=C][,seed=S][,queries=Q]")
	metricName := fs.String("metric", "cosine", "the metric `M`: cosine, dot or l2")
	k := fs.Int("k", 10, "`N` neighbours per query")
	efs := fs.String("ef", "10,20,40,80,160,320", "the ef sweep, a comma-separated `LIST`")
	m := fs.Int("m", 16, "HNSW M, `N` neighbours per node")
	efc := fs.Int("efc", 200, "HNSW efConstruction `N`")
	backends := fs.String("backends", "hnsw,flat,coder", "comma-separated `LIST` of backends: hnsw, flat, coder")
	quantize := fs.String("quantize", "none", "the hnsw backend's quantization `Q`: none, or sq8 (walk on 8-bit codes, re-rank with float32)")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "`N` goroutines for the parallel build and query runs (1: single-goroutine build)")
	queries := fs.Int("queries", 0, "use at most `N` queries (0: all)")
	jsonOut := fs.String("json", "", "write the results as JSON to `FILE`")
	svgOut := fs.String("svg", "", "write a recall vs queries/s chart to `FILE`")
	hnswlibIn := fs.String("hnswlib", "", "add hnswlib's points to the chart from `FILE`, the results.jsonl the hnswlib side-by-side script leaves in its work directory")
	showProgress := fs.Bool("progress", false, "show each build's progress, vectors/s and the time left on standard error (default: when it is a terminal)")
	if err := fs.parse(args); err != nil {
		return err
	}
	metric, err := index.ParseMetric(*metricName)
	if err != nil {
		return fs.fail("%v", err)
	}
	quant, err := index.ParseQuantization(*quantize)
	if err != nil {
		return fs.fail("--quantize: %v", err)
	}
	cfg := bench.Config{K: *k, M: *m, EfC: *efc, Threads: *threads, Queries: *queries, Snapshot: true, Quantize: quant}
	if *showProgress || !fs.isSet("progress") && isTerminal(stderr) {
		cfg.BuildProgress = buildProgress(stderr)
	}
	for _, b := range strings.Split(*backends, ",") {
		if b = strings.TrimSpace(b); b != "" {
			cfg.Backends = append(cfg.Backends, b)
		}
	}
	for _, s := range strings.Split(*efs, ",") {
		ef, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || ef <= 0 {
			return fs.fail("--ef %q: want positive integers", *efs)
		}
		cfg.Efs = append(cfg.Efs, ef)
	}
	var ds *bench.Dataset
	switch {
	case *synth != "" && *base == "":
		p, err := bench.ParseSynthetic(*synth)
		if err != nil {
			return fs.fail("--synthetic: %v", err)
		}
		p.Metric = metric
		fmt.Fprintf(stderr, "generating %s\n", *synth)
		if err := await(ctx, func() error { ds = bench.Synthetic(p); return nil }); err != nil {
			return err
		}
	case *base != "" && *queryF != "" && *synth == "":
		err := await(ctx, func() (err error) {
			ds, err = bench.LoadTexmex(filepath.Base(*base), *base, *queryF, *gt, metric)
			return err
		})
		if err != nil {
			return err
		}
	default:
		return fs.fail("give --base and --query, or --synthetic")
	}
	var extra []bench.Row
	if *hnswlibIn != "" {
		f, err := os.Open(*hnswlibIn)
		if err != nil {
			return fmt.Errorf("--hnswlib: %w", err)
		}
		extra, err = bench.ReadHnswlibResults(f, *k)
		f.Close()
		if err != nil {
			return fmt.Errorf("--hnswlib: %w", err)
		}
	}
	var rows []bench.Row
	err = await(ctx, func() (err error) {
		rows, err = bench.Run(ds, cfg, stderr)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %d x %d, %d queries, %s, k=%d, M=%d, efConstruction=%d, %d goroutines\n",
		ds.Name, len(ds.Base), ds.Dim(), len(ds.Queries), metric, *k, *m, *efc, *threads)
	fmt.Fprint(out, bench.Table(rows))
	if *jsonOut != "" {
		js, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		if err := os.WriteFile(*jsonOut, append(js, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if *svgOut != "" {
		title := fmt.Sprintf("%s (%d x %d, %s): recall@%d vs queries/s", ds.Name, len(ds.Base), ds.Dim(), metric, *k)
		chart := append(slices.Clip(rows), extra...)
		if err := writeFile(*svgOut, func(w io.Writer) error { return bench.WriteSVG(w, chart, title) }); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	return nil
}

// writeFile creates the file name and writes it with write, reporting the
// first error of the create, the writes and the close.
func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// buildProgress reports each backend's build on w, one progress per
// backend; the harness calls it from its building goroutines.
func buildProgress(w io.Writer) func(backend string, done, total int) {
	var mu sync.Mutex
	var p *progress
	current := ""
	return func(backend string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if backend != current {
			p.clear()
			current, p = backend, newCountProgress(w, "building "+backend, "vectors", int64(total))
		}
		p.update(int64(done), 0)
		if done == total {
			p.clear()
		}
	}
}
