package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mnemodb/mnemo/memory/reembed"
)

// reembedCmd moves a collection to a new embedder (package reembed):
// every record embedded again into a staging collection while the
// collection serves, then switched in its place atomically. Run again
// after an interruption, it resumes.
func reembedCmd(ctx context.Context, args []string, out, stderr io.Writer) (err error) {
	fs := newFlags("reembed", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, true, "the collection `NAME` to re-embed")
	dim := fs.Int("dim", 0, "the dimension `N` of --embedder openai or ollama (the model's)")
	ef := addEmbedderFlags(fs, "the new embedder `NAME`")
	batch := fs.Int("batch", reembed.DefaultBatch, "embed `N` texts per request")
	showProgress := fs.Bool("progress", false, "show progress on standard error (default: when it is a terminal)")
	fs.require("embedder")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *batch <= 0 {
		return fs.fail("--batch %d, want > 0", *batch)
	}
	e, err := ef.build(*dim)
	if err != nil {
		return fs.fail("--embedder: %v", err)
	}
	if *dim != 0 && *dim != e.Dimension() {
		return fs.fail("--dim %d disagrees with --embedder %s, whose dimension is %d", *dim, *ef.name, e.Dimension())
	}
	db, err := openStore(ctx, *dir, true, false)
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	var prog *progress
	pass := 0
	show := *showProgress || !fs.isSet("progress") && isTerminal(stderr)
	o := &reembed.Options{Batch: *batch, Progress: func(p reembed.Progress) {
		if !show {
			return
		}
		if prog == nil || pass != p.Pass {
			pass = p.Pass
			prog.clear()
			verb := fmt.Sprintf("re-embedding (pass %d)", p.Pass)
			if p.Final {
				verb = "switching (last pass, writes wait)"
			}
			prog = newCountProgress(stderr, verb, "records", int64(p.Total))
		}
		prog.update(int64(p.Scanned), 0)
	}}
	res, err := reembed.Collection(ctx, db, *name, e, o)
	prog.clear()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted after embedding %d records; run the same command again to resume: %w", res.Embedded, err)
		}
		return err
	}
	if res.Done {
		fmt.Fprintf(out, "collection %q is already embedded with %s (%d records); nothing to do\n", *name, e.Identity(), res.Records)
		return nil
	}
	fmt.Fprintf(out, "collection %q re-embedded with %s: %d records, %d embedded in %d passes\n", *name, e.Identity(), res.Records, res.Embedded, res.Passes)
	return nil
}
