package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mnemodb/mnemo"
)

var _ mnemo.Replacer = (*Store)(nil)

// ReplaceCollection implements mnemo.Replacer: in one transaction it
// takes the catalog lock and an EXCLUSIVE lock on name's table (writes
// wait, reads go on), runs final, then deletes name's catalog entry and
// tables and gives with's collection the name. Every process sees the old
// collection under name or the new one. Writes that waited, and writes
// through handles of the old collection afterwards, fail with an error
// wrapping mnemo.ErrCollectionNotFound.
//
// final's collections use connections of their own (two, besides the
// transaction's), so writers waiting on the lock, however many, cannot
// take every connection final needs. Each waiting writer holds one of
// the Store's connections, though: with a pool smaller than the writers,
// reads through the same Store wait for a connection until the switch
// is done. Catalog changes of other
// collections (create, drop) wait while final runs. A connection lost on
// the way rolls everything back; the call is not retried, since final
// need not be idempotent.
func (s *Store) ReplaceCollection(ctx context.Context, name, with string, final func(ctx context.Context, old, new mnemo.Collection) error) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if name == with {
		return fmt.Errorf("%w: a collection cannot replace itself (%q)", mnemo.ErrInvalidConfig, name)
	}
	for _, n := range []string{name, with} {
		if !storable(n) {
			return fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, n)
		}
	}
	cfg := s.pool.Config().Copy()
	cfg.MinConns, cfg.MaxConns = 0, 3
	side, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer side.Close()
	sideStore := &Store{pool: side, retry: s.retry}
	err = pgx.BeginFunc(ctx, side, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		oldID, oldCfg, err := catalogEntry(ctx, tx, name)
		if err != nil {
			return err
		}
		newID, newCfg, err := catalogEntry(ctx, tx, with)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE `+tableName(oldID)+` IN EXCLUSIVE MODE`); err != nil {
			return err
		}
		if final != nil {
			if err := final(ctx, sideStore.newCollection(name, oldID, oldCfg), sideStore.newCollection(with, newID, newCfg)); err != nil {
				return &finalError{err}
			}
		}
		stmts := []string{`DELETE FROM mnemo_collections WHERE id = ` + fmt.Sprint(oldID),
			`UPDATE mnemo_collections SET name = $1 WHERE id = ` + fmt.Sprint(newID),
			`DROP TABLE ` + tableName(oldID)}
		for i, stmt := range append(stmts, dropTextTables(oldID)...) {
			var err error
			if i == 1 {
				_, err = tx.Exec(ctx, stmt, name)
			} else {
				_, err = tx.Exec(ctx, stmt)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	var fe *finalError
	if errors.As(err, &fe) {
		return fe.err
	}
	if err != nil {
		return serverError(err)
	}
	return nil
}

// finalError carries final's own error through the transaction, so it
// is returned as it is.
type finalError struct{ err error }

func (e *finalError) Error() string { return e.err.Error() }

// catalogEntry reads a collection's id and config and locks its catalog
// row for the transaction.
func catalogEntry(ctx context.Context, tx pgx.Tx, name string) (int64, mnemo.CollectionConfig, error) {
	var id int64
	var js []byte
	err := tx.QueryRow(ctx, `SELECT id, config FROM mnemo_collections WHERE name = $1 FOR UPDATE`, name).Scan(&id, &js)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, mnemo.CollectionConfig{}, fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
	}
	if err != nil {
		return 0, mnemo.CollectionConfig{}, err
	}
	cfg, err := decodeConfig(name, js)
	return id, cfg, err
}
