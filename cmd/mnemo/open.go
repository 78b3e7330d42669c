package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/postgres"
)

// isServer reports whether --db names a PostgreSQL server (a postgres://
// or postgresql:// URL) rather than a database directory.
func isServer(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openStore opens --db: a PostgreSQL server (with pgvector) when it is a
// URL, otherwise an engine database directory, for reading only unless
// write is set. Only create lets it create a database directory; a
// server's database must exist (its mnemo tables are made on first use).
// Connecting to a server honours ctx, and so does opening a directory for
// reading (see openReadOnly); an open for writing finishes first. A
// directory another process holds is read through its live access (see
// dialLive).
func openStore(ctx context.Context, db string, write, create bool) (mnemo.Store, error) {
	if isServer(db) {
		return postgres.Open(ctx, db, nil)
	}
	opts := &engine.Options{MustExist: !create, ReadOnly: !write}
	if write {
		return engine.OpenStore(db, opts)
	}
	s, err := openReadOnly(ctx, func() (mnemo.Store, error) { return engine.OpenStore(db, opts) })
	if err != nil {
		l, err := dialLive(ctx, db, err)
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	return s, nil
}

// validate reports whether c would accept r, as the engine's
// Collection.Validate words it when c is embedded.
func validate(c mnemo.Collection, r mnemo.Record) error {
	if v, ok := c.(interface{ Validate(mnemo.Record) error }); ok {
		return v.Validate(r)
	}
	_, err := mnemo.CheckRecord(c.Config(), 0, r)
	return err
}

// serverStats is stats for a server: each collection's records and shape,
// as text or, with asJSON, as stats --json's object.
func serverStats(ctx context.Context, db string, asJSON bool, out io.Writer) error {
	s, err := openStore(ctx, db, false, false)
	if err != nil {
		return err
	}
	defer s.Close()
	names, err := s.Collections(ctx)
	if err != nil {
		return err
	}
	st := statsJSON{Backend: "postgres", Collections: []collectionStatsJSON{}}
	for _, name := range names {
		c, err := s.Collection(ctx, name)
		if err != nil {
			return err
		}
		n, err := c.Count(ctx)
		if err != nil {
			return err
		}
		cfg := c.Config()
		if asJSON {
			st.Collections = append(st.Collections, collectionJSON(name, n, cfg))
			continue
		}
		fmt.Fprintf(out, "%s: %d records, dimension %d, %v, %s index\n", name, n, cfg.Dimension, cfg.Metric, cfg.Index)
	}
	if asJSON {
		return writeStatsJSON(out, st)
	}
	return nil
}

// serverVerify is verify for a server: every record of every collection
// reads back and passes the engine's checks, and each collection's count
// is the number of records read.
func serverVerify(ctx context.Context, db string, out io.Writer) error {
	s, err := openStore(ctx, db, false, false)
	if err != nil {
		return err
	}
	defer s.Close()
	names, err := s.Collections(ctx)
	if err != nil {
		return err
	}
	problems := 0
	for _, name := range names {
		c, err := s.Collection(ctx, name)
		if err != nil {
			return err
		}
		read, after := 0, ""
		for {
			page, next, err := c.Scan(ctx, after, 1000)
			if err != nil {
				return err
			}
			for _, r := range page {
				if _, err := mnemo.CheckRecord(c.Config(), 0, r); err != nil {
					fmt.Fprintf(out, "problem: %s: record %q: %v\n", name, r.ID, err)
					problems++
				}
			}
			read += len(page)
			if next == "" {
				break
			}
			after = next
		}
		if n, err := c.Count(ctx); err != nil {
			return err
		} else if n != read {
			fmt.Fprintf(out, "problem: %s: counts %d records, %d read\n", name, n, read)
			problems++
		}
	}
	if problems > 0 {
		return errInconsistent
	}
	fmt.Fprintf(out, "ok: %d collections consistent\n", len(names))
	return nil
}
