package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// backup writes a consistent copy of a database into a new directory.
// Restore is opening the copy; `mnemo verify --db COPY` checks it.
func backup(args []string, out, stderr io.Writer) (err error) {
	fs := newFlags("backup", "backup --db DIR --to DIR2", stderr)
	dir, _ := dbFlags(fs, false)
	to := fs.String("to", "", "backup `DIR2`, absent or empty (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *to == "" {
		return fmt.Errorf("%w: --to is required", errUsage)
	}
	db, err := openDB(*dir, false)
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	start := time.Now()
	if err := db.Backup(context.Background(), *to); err != nil {
		return err
	}
	fmt.Fprintf(out, "backed up %s to %s in %s\n", *dir, *to, time.Since(start).Round(time.Millisecond))
	return nil
}

// compact gives the space of deleted records back.
func compact(args []string, out, stderr io.Writer) (err error) {
	fs := newFlags("compact", "compact --db DIR", stderr)
	dir, _ := dbFlags(fs, false)
	if err := parse(fs, args); err != nil {
		return err
	}
	db, err := openDB(*dir, false)
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	start := time.Now()
	if err := db.Compact(context.Background()); err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted %s in %s\n", *dir, time.Since(start).Round(time.Millisecond))
	return nil
}
