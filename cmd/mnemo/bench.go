package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/mnemodb/mnemo/bench"
)

// benchCmd dispatches "mnemo bench SUBCOMMAND".
func benchCmd(args []string, out, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "ann" {
		fmt.Fprintln(stderr, "Usage: mnemo bench ann [flags]   (mnemo bench ann --help)")
		return errUsage
	}
	return benchANN(args[1:], out, stderr)
}

// benchANN measures the index backends on the user's data or a synthetic
// set: build rate, memory, recall@k, queries/s and latency per ef.
func benchANN(args []string, out, stderr io.Writer) error {
	fs := newFlags("bench ann", "bench ann (--base F --query F [--gt F] | --synthetic n=N,dim=D,clusters=C,seed=S) [flags]", stderr)
	base := fs.String("base", "", "base vectors (`FILE`: .fvecs or .bvecs)")
	queryF := fs.String("query", "", "query vectors (.fvecs or .bvecs)")
	gt := fs.String("gt", "", "ground truth (.ivecs); computed exactly when absent")
	synth := fs.String("synthetic", "", "a synthetic clustered set: n=,dim=,clusters=,seed=,queries=")
	metricName := fs.String("metric", "cosine", "cosine, dot or l2")
	k := fs.Int("k", 10, "neighbours per query")
	efs := fs.String("ef", "10,20,40,80,160,320", "comma-separated ef sweep")
	m := fs.Int("m", 16, "HNSW M")
	efc := fs.Int("efc", 200, "HNSW efConstruction")
	backends := fs.String("backends", "hnsw,flat,coder", "comma-separated: hnsw, flat, coder")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "goroutines for the parallel build and query runs (1: single-goroutine build)")
	queries := fs.Int("queries", 0, "use at most this many queries (0: all)")
	jsonOut := fs.String("json", "", "write the results as JSON to `FILE`")
	svgOut := fs.String("svg", "", "write a recall vs queries/s chart to `FILE`")
	if err := parse(fs, args); err != nil {
		return err
	}
	metric, err := parseMetric(*metricName)
	if err != nil {
		return err
	}
	cfg := bench.Config{K: *k, M: *m, EfC: *efc, Threads: *threads, Queries: *queries, Snapshot: true}
	for _, b := range strings.Split(*backends, ",") {
		if b = strings.TrimSpace(b); b != "" {
			cfg.Backends = append(cfg.Backends, b)
		}
	}
	for _, s := range strings.Split(*efs, ",") {
		ef, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || ef <= 0 {
			return fmt.Errorf("%w: --ef %q: want positive integers", errUsage, *efs)
		}
		cfg.Efs = append(cfg.Efs, ef)
	}
	var ds *bench.Dataset
	switch {
	case *synth != "" && *base == "":
		p, err := bench.ParseSynthetic(*synth)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		p.Metric = metric
		fmt.Fprintf(stderr, "generating %s\n", *synth)
		ds = bench.Synthetic(p)
	case *base != "" && *queryF != "" && *synth == "":
		if ds, err = bench.LoadTexmex(filepath.Base(*base), *base, *queryF, *gt, metric); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: give --base and --query, or --synthetic", errUsage)
	}
	rows, err := bench.Run(ds, cfg, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %d x %d, %d queries, %s, k=%d, M=%d, efConstruction=%d, %d goroutines\n",
		ds.Name, len(ds.Base), ds.Dim(), len(ds.Queries), metric, *k, *m, *efc, *threads)
	fmt.Fprint(out, bench.Table(rows))
	if *jsonOut != "" {
		js, _ := json.MarshalIndent(rows, "", "  ")
		if err := os.WriteFile(*jsonOut, append(js, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *svgOut != "" {
		f, err := os.Create(*svgOut)
		if err != nil {
			return err
		}
		defer f.Close()
		title := fmt.Sprintf("%s (%d x %d, %s): recall@%d vs queries/s", ds.Name, len(ds.Base), ds.Dim(), metric, *k)
		if err := bench.WriteSVG(f, rows, title); err != nil {
			return err
		}
	}
	return nil
}
