package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// backup writes a consistent copy of a database into a new directory.
// Restore is opening the copy; `mnemo verify --db COPY` checks it.
func backup(ctx context.Context, args []string, out, stderr io.Writer) (err error) {
	fs := newFlags("backup", out, stderr)
	dir := dbFlag(fs)
	fs.require("to")
	to := fs.String("to", "", "write the copy into `DIR2`, which must be absent or empty")
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := openDB(*dir, false)
	if err != nil {
		return liveBackup(ctx, *dir, *to, out, err)
	}
	defer closeDB(db, &err)
	start := time.Now()
	if err := db.Backup(ctx, *to); err != nil {
		return err
	}
	fmt.Fprintf(out, "backed up %s to %s in %s\n", *dir, *to, time.Since(start).Round(time.Millisecond))
	return nil
}

// liveBackup has the process holding dir write the backup, through its
// live access, when opening dir failed with openErr because that process
// holds it. The holder gets to's absolute path.
func liveBackup(ctx context.Context, dir, to string, out io.Writer, openErr error) error {
	l, err := dialLive(ctx, dir, openErr)
	if err != nil {
		return err
	}
	defer l.Close()
	abs, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := l.Backup(ctx, abs); err != nil {
		return err
	}
	fmt.Fprintf(out, "backed up %s to %s in %s\n", dir, to, time.Since(start).Round(time.Millisecond))
	return nil
}

// compact gives the space of deleted records back.
func compact(ctx context.Context, args []string, out, stderr io.Writer) (err error) {
	fs := newFlags("compact", out, stderr)
	dir := dbFlag(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	db, err := openDB(*dir, false)
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	start := time.Now()
	if err := db.Compact(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted %s in %s\n", *dir, time.Since(start).Round(time.Millisecond))
	return nil
}
