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

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// jsonRecord is the JSONL form of a record for import and export. Group
// and Position are its place, kept in its metadata (see place.go).
type jsonRecord struct {
	ID       string         `json:"id"`
	Vector   []float32      `json:"vector"`
	Content  string         `json:"content,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Group    *lineGroup     `json:"group,omitempty"`
	Position *linePosition  `json:"position,omitempty"`
}

// toJSON returns the JSONL form of r: its place, when its metadata holds
// one as import stores it, as Group and Position, out of the metadata.
func toJSON(r mnemo.Record) jsonRecord {
	jr := jsonRecord{ID: r.ID, Vector: r.Vector, Content: r.Content, Metadata: r.Metadata}
	if g, p, ok := recordPlace(r.Metadata); ok {
		group, pos := lineGroup(g), linePosition(p)
		jr.Group, jr.Position, jr.Metadata = &group, &pos, withoutPlace(r.Metadata)
	}
	return jr
}

// dbFlag adds the required flag --db to fs.
func dbFlag(fs *flagSet) *string {
	fs.require("db")
	return fs.String("db", "", "the database directory `DIR`, or a PostgreSQL URL (postgres://...)")
}

// collectionFlag adds --collection to fs, required or optional.
func collectionFlag(fs *flagSet, required bool, usage string) *string {
	if required {
		fs.require("collection")
	}
	return fs.String("collection", "", usage)
}

// openDB opens the database in dir. Unless create is set, a missing
// database is an error wrapping engine.ErrNoDatabase and nothing is
// created: only import, told a collection's shape, creates one.
func openDB(dir string, create bool) (*engine.DB, error) {
	return engine.Open(dir, &engine.Options{MustExist: !create})
}

// openReader opens the database in dir for reading only: commands that
// inspect a database write nothing to it (a damaged checkpoint is rebuilt
// in memory, not replaced), and never create one. Once ctx is done it
// returns at once (see openReadOnly).
func openReader(ctx context.Context, dir string) (*engine.DB, error) {
	return openReadOnly(ctx, func() (*engine.DB, error) {
		return engine.Open(dir, &engine.Options{MustExist: true, ReadOnly: true})
	})
}

// closeDB closes db and reports a failed close in *err unless it already
// holds an error. Commands that write defer it, so that a failure to
// flush or checkpoint at close is not lost.
func closeDB(db io.Closer, err *error) {
	if cerr := db.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// openCollection opens --db (a directory or a server) for reading and its
// collection name; the caller closes the store.
func openCollection(ctx context.Context, db, name string) (mnemo.Store, mnemo.Collection, error) {
	s, err := openStore(ctx, db, false, false)
	if err != nil {
		return nil, nil, err
	}
	c, err := s.Collection(ctx, name)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, c, nil
}

func stats(ctx context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("stats", out, stderr)
	dir := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object (fields in docs/observability.md)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if isServer(*dir) {
		return serverStats(ctx, *dir, *asJSON, out)
	}
	var st engine.Stats
	if db, err := openReader(ctx, *dir); err == nil {
		defer db.Close()
		if st, err = db.Stats(ctx); err != nil {
			return err
		}
	} else {
		l, err := dialLive(ctx, *dir, err)
		if err != nil {
			return err
		}
		defer l.Close()
		if st, err = l.Stats(ctx); err != nil {
			return err
		}
	}
	disk, err := diskBytes(*dir)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeStatsJSON(out, engineStatsJSON(st, disk))
	}
	fmt.Fprintf(out, "database %s, opened in %s, %d bytes on disk\n", st.DatabaseID, st.OpenDuration, disk)
	for _, c := range st.Collections {
		fmt.Fprintf(out, "%s: %d records, dimension %d, %v, %s index (%d bytes, %d tombstones), %d log records, last checkpoint at seq %d, opened by %s",
			c.Name, c.Records, c.Config.Dimension, c.Config.Metric, c.Config.Index, c.IndexBytes, c.IndexTombstones, c.LogRecords, c.LastCheckpointSeq, c.OpenedBy)
		if c.RebuildReason != "" {
			fmt.Fprintf(out, " (%s)", c.RebuildReason)
		}
		fmt.Fprintln(out)
	}
	return nil
}

func get(ctx context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("get", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, true, "the collection `NAME`")
	if err := fs.parseArgs(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fs.fail("no IDs given")
	}
	db, c, err := openCollection(ctx, *dir, *name)
	if err != nil {
		return err
	}
	defer db.Close()
	enc := json.NewEncoder(out)
	for _, id := range fs.Args() {
		r, ok, err := c.Get(ctx, id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no record %q in %q", id, *name)
		}
		enc.Encode(toJSON(r))
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

func checkpoint(ctx context.Context, args []string, out, stderr io.Writer) (err error) {
	fs := newFlags("checkpoint", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, false, "checkpoint only the collection `NAME` (default: every collection)")
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := openDB(*dir, false)
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	names := db.Collections()
	if *name != "" {
		names = []string{*name}
	}
	for _, n := range names {
		c, err := db.Collection(n)
		if err != nil {
			return err
		}
		if err := c.Checkpoint(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "checkpointed %s\n", n)
	}
	return nil
}

func verify(ctx context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("verify", out, stderr)
	dir := dbFlag(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if isServer(*dir) {
		return serverVerify(ctx, *dir, out)
	}
	db, err := openReader(ctx, *dir)
	if engine.IsCorruption(err) {
		fmt.Fprintf(out, "problem: %v\n", err)
		return errInconsistent
	}
	var problems []string
	var n int
	if err == nil {
		defer db.Close()
		if problems, err = db.Verify(ctx); err != nil {
			return err
		}
		n = len(db.Collections())
	} else {
		l, err := dialLive(ctx, *dir, err)
		if err != nil {
			return err
		}
		defer l.Close()
		if problems, n, err = l.Verify(ctx); err != nil {
			return err
		}
	}
	for _, p := range problems {
		fmt.Fprintf(out, "problem: %s\n", p)
	}
	if len(problems) > 0 {
		return errInconsistent
	}
	fmt.Fprintf(out, "ok: %d collections consistent\n", n)
	return nil
}

// errInconsistent makes verify exit 1 after printing its problems.
var errInconsistent = errors.New("the database is not consistent")

func export(ctx context.Context, args []string, out, stderr io.Writer) error {
	fs := newFlags("export", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, true, "the collection `NAME`")
	file := fs.String("out", "", "write to `FILE` instead of standard output")
	if err := fs.parse(args); err != nil {
		return err
	}
	db, c, err := openCollection(ctx, *dir, *name)
	if err != nil {
		return err
	}
	defer db.Close()
	w := out
	if *file != "" {
		f, err := os.Create(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	after, n := "", 0
	for {
		page, next, err := c.Scan(ctx, after, 1000)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := enc.Encode(toJSON(r)); err != nil {
				return err
			}
			n++
		}
		if next == "" {
			break
		}
		after = next
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "exported %d records\n", n)
	return nil
}
