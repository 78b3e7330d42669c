package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mnemodb/mnemo/engine"
)

// importCmd reads JSONL records and commits them in batches with fsync,
// printing "committed N" (cumulative) after each commit: a record counted
// there is durable. A bad line stops the import before its batch is
// written, unless --skip-bad, which reports it and goes on.
func importCmd(args []string, stdin io.Reader, out, stderr io.Writer) error {
	fs := newFlags("import", "import --db DIR --collection NAME [--dim N --metric M] [--file F] [--batch N] [--skip-bad]", stderr)
	dir, name := dbFlags(fs, true)
	dim := fs.Int("dim", 0, "dimension, to create the collection (and the database) if it does not exist")
	metricName := fs.String("metric", "cosine", "metric of a new collection: cosine, dot or l2")
	file := fs.String("file", "", "read `FILE` instead of standard input")
	batch := fs.Int("batch", 1000, "records per commit")
	skipBad := fs.Bool("skip-bad", false, "report bad lines and go on instead of stopping")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *batch <= 0 {
		return fmt.Errorf("%w: --batch %d, want > 0", errUsage, *batch)
	}
	if *name == "" {
		return fmt.Errorf("%w: --collection is required", errUsage)
	}
	metric, err := parseMetric(*metricName)
	if err != nil {
		return err
	}
	in := stdin
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	db, err := openDB(*dir, *dim > 0)
	if errors.Is(err, engine.ErrNoDatabase) {
		return fmt.Errorf("no database in %s; pass --dim to create it", *dir)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.Collection(*name)
	if errors.Is(err, engine.ErrCollectionNotFound) {
		if *dim <= 0 {
			return fmt.Errorf("collection %q does not exist in %s; pass --dim to create it", *name, *dir)
		}
		c, err = db.CreateCollection(*name, engine.CollectionConfig{Dimension: *dim, Metric: metric})
	}
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var pending []engine.Record
	committed, bad, line := 0, 0, 0
	commit := func() error {
		if len(pending) == 0 {
			return nil
		}
		if _, err := c.Upsert(context.Background(), pending...); err != nil {
			return err
		}
		committed += len(pending)
		pending = pending[:0]
		fmt.Fprintf(out, "committed %d\n", committed)
		if committed%(10*(*batch)) == 0 {
			fmt.Fprintf(stderr, "imported %d records (line %d)\n", committed, line)
		}
		return nil
	}
	seen := map[string]bool{}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var jr jsonRecord
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		err := dec.Decode(&jr)
		rec := engine.Record{ID: jr.ID, Vector: jr.Vector, Content: jr.Content, Metadata: jr.Metadata}
		if err == nil {
			err = c.Validate(rec)
		}
		if err == nil && jr.ID != "" && seen[jr.ID] {
			err = fmt.Errorf("id %q appears twice in one batch", jr.ID)
		}
		if err != nil {
			if !*skipBad {
				return fmt.Errorf("line %d: %v (nothing of this batch was written; %d records committed before it)", line, err, committed)
			}
			bad++
			fmt.Fprintf(stderr, "line %d: skipped: %v\n", line, err)
			continue
		}
		if jr.ID != "" {
			seen[jr.ID] = true
		}
		pending = append(pending, rec)
		if len(pending) == *batch {
			if err := commit(); err != nil {
				return err
			}
			clear(seen)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %v", line+1, err)
	}
	if err := commit(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "imported %d records, skipped %d bad lines\n", committed, bad)
	return nil
}

func parseMetric(s string) (engine.Metric, error) {
	switch strings.ToLower(s) {
	case "cosine":
		return engine.Cosine, nil
	case "dot", "ip":
		return engine.Dot, nil
	case "l2", "euclidean":
		return engine.L2, nil
	}
	return 0, fmt.Errorf("%w: unknown metric %q (want cosine, dot or l2)", errUsage, s)
}
