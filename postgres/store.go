package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// SchemaVersion is the version of the tables this package creates and
// reads.
const SchemaVersion = 3

// Options configures a Store. The zero value (or nil) is valid. Open
// copies what it needs: the Options may be reused or changed afterwards.
type Options struct {
	// MaxConns bounds each connection pool (the primary's and, with
	// ReadDSN, the read server's); zero means pgx's default (the larger
	// of 4 and the number of CPUs).
	MaxConns int
	// RetryTimeout is how long a call keeps retrying after a connection
	// error before it fails with ErrUnavailable; zero means 5 seconds, a
	// negative value no retries.
	RetryTimeout time.Duration
	// ReadDSN, when set, names a read server: a hot standby (read
	// replica) of the primary that Open's dsn names, with the same
	// database and search path. Open then opens a second pool on it, and
	// the calls that only read (Collections, Collection, Get, Scan, Count
	// and Query) go there; writes (Upsert, Delete, CreateCollection,
	// DropCollection) and TryLock stay on the primary. Open only reads
	// the schema's version there and never changes anything on it.
	//
	// Reads on a replica do not always see one's own writes: with
	// asynchronous replication (PostgreSQL's default) a read may not see a
	// write that returned a moment ago, until the replica has replayed it.
	// They do when the primary runs with synchronous_commit = remote_apply
	// and the replica is among its synchronous_standby_names: a write then
	// returns only after the replica applied it. See the package doc,
	// Read replicas.
	ReadDSN string
	// Logger receives the backend's diagnostic messages as structured
	// records: a call that met a connection error and retries (Warn,
	// with the error and the wait), and one that gives up after
	// RetryTimeout (Error). Default: discarded.
	Logger *slog.Logger
	// Metrics, when set, receives an event for every upsert, delete and
	// query (see package metrics for the operations and their fields).
	// It is called on the caller's goroutine and must be safe for
	// concurrent use. Default nil: no event is built and no clock read.
	Metrics metrics.Recorder
}

// Validate reports every problem with the options at once.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var problems []string
	if o.MaxConns < 0 {
		problems = append(problems, fmt.Sprintf("MaxConns %d, want >= 0", o.MaxConns))
	}
	if o.ReadDSN != "" {
		if _, err := pgxpool.ParseConfig(o.ReadDSN); err != nil {
			problems = append(problems, fmt.Sprintf("ReadDSN: %v", err))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", mnemo.ErrInvalidConfig, strings.Join(problems, "; "))
	}
	return nil
}

// Store is a set of collections in one PostgreSQL database. It implements
// mnemo.Store and is safe for concurrent use by multiple goroutines.
type Store struct {
	pool   *pgxpool.Pool // the primary's: writes, locks, and reads without a read server
	read   *pgxpool.Pool // the read server's (Options.ReadDSN), nil without one
	retry  time.Duration
	log    *slog.Logger
	rec    metrics.Recorder // nil when off
	closed atomic.Bool

	locks lockConn // advisory locks taken by TryLock (lock.go)
}

var _ mnemo.Store = (*Store)(nil)

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value connection string, as pgx reads it), creates the pgvector
// extension and mnemo's tables when missing (or migrates them), and
// returns the Store, which owns its connection pools: Close closes them.
// When the schema is already at SchemaVersion, Open only reads it (no DDL,
// no lock), so it opens a read replica too; a read-only server whose
// schema is missing or older fails with ErrReadOnly. With
// Options.ReadDSN, Open then reads the schema's version on the read
// server, waiting up to Options.RetryTimeout for it to replay a schema
// the primary just made, and fails with ErrReadOnly when it is still
// missing or older there (or ErrSchema when it is newer).
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", mnemo.ErrInvalidConfig, err)
	}
	var rcfg *pgxpool.Config
	if opts.ReadDSN != "" {
		if rcfg, err = pgxpool.ParseConfig(opts.ReadDSN); err != nil {
			return nil, fmt.Errorf("%w: ReadDSN: %v", mnemo.ErrInvalidConfig, err)
		}
	}
	for _, c := range []*pgxpool.Config{cfg, rcfg} {
		if c != nil && opts.MaxConns > 0 {
			c.MaxConns = int32(opts.MaxConns)
		}
	}
	s := &Store{retry: opts.RetryTimeout, log: telemetry.Logger(opts.Logger), rec: opts.Metrics}
	if s.retry == 0 {
		s.retry = 5 * time.Second
	}
	err = s.do(ctx, func(ctx context.Context) error {
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		if v, err := schemaVersion(ctx, conn); err == nil && v == SchemaVersion {
			return nil // current: no lock and no DDL, so a read replica opens too
		}
		return migrate(ctx, conn) // decides again, under the lock
	})
	if err != nil {
		return nil, err
	}
	if rcfg != nil {
		if err := s.checkReader(ctx, rcfg.ConnConfig); err != nil {
			return nil, err
		}
		rcfg.AfterConnect = afterConnect
		if s.read, err = pgxpool.NewWithConfig(ctx, rcfg); err != nil {
			return nil, fmt.Errorf("postgres: read server (ReadDSN): %w", err)
		}
	}
	cfg.AfterConnect = afterConnect
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		if s.read != nil {
			s.read.Close()
		}
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

// afterConnect prepares a new connection of the pool: pgvector's types,
// and pgvector's iterative index scan in strict order, so that a filtered
// HNSW query goes on until it has its K hits (hnsw.ef_search is set per
// query, when it changes: see Collection.sides).
func afterConnect(ctx context.Context, conn *pgx.Conn) error {
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, `SELECT set_config('hnsw.iterative_scan', 'strict_order', false)`)
	return err
}

// checkReader reads the schema's version on the read server and changes
// nothing there. A standby shows a schema the primary made only once it
// has replayed it, so a missing or older schema is read again, with
// backoff, for up to s.retry before it is ErrReadOnly.
func (s *Store) checkReader(ctx context.Context, cfg *pgx.ConnConfig) error {
	start := time.Now()
	wait := 20 * time.Millisecond
	for {
		var version int64
		err := s.do(ctx, func(ctx context.Context) error {
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			version, err = schemaVersion(ctx, conn)
			return err
		})
		switch {
		case err != nil:
			return fmt.Errorf("read server (ReadDSN): %w", err)
		case version == SchemaVersion:
			return nil
		case s.retry < 0 || time.Since(start)+wait > s.retry:
			have := "no mnemo schema"
			if version > 0 {
				have = fmt.Sprintf("mnemo schema version %d, this version needs %d", version, SchemaVersion)
			}
			return fmt.Errorf("%w: the read server (ReadDSN) has %s after %v; the schema must be made on the primary, which the read server must replicate",
				ErrReadOnly, have, time.Since(start).Round(time.Millisecond))
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// reader is the pool for calls that only read: the read server's with
// Options.ReadDSN, else the primary's.
func (s *Store) reader() *pgxpool.Pool {
	if s.read != nil {
		return s.read
	}
	return s.pool
}

// schemaLock is the advisory lock key that serialises schema and catalog
// changes ("mnemo" in ASCII).
const schemaLock = 0x6d6e656d6f

// migrate brings the schema to SchemaVersion, creating it in a database
// (schema) that has none, under the advisory lock, so that concurrent
// Opens of a new schema create it once. It changes nothing when the
// schema is current, and fails with ErrReadOnly when it would change
// something on a read-only server. Any state schemaVersion refuses is
// ErrSchema and is left as it was.
func migrate(ctx context.Context, conn *pgx.Conn) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		version, err := schemaVersion(ctx, tx)
		if err != nil || version == SchemaVersion {
			return err
		}
		var readOnly string
		if err := tx.QueryRow(ctx, `SELECT current_setting('transaction_read_only')`).Scan(&readOnly); err != nil {
			return err
		}
		if readOnly == "on" {
			if version == 0 {
				return fmt.Errorf("%w: the database has no mnemo schema; the schema must be created on the primary", ErrReadOnly)
			}
			return fmt.Errorf("%w: the database has mnemo schema version %d, this version needs %d; the schema must be migrated on the primary", ErrReadOnly, version, SchemaVersion)
		}
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS mnemo_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		for v := version + 1; v <= SchemaVersion; v++ {
			stmts, err := migrations[v-1](ctx, tx)
			if err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", v, err)
			}
			for _, stmt := range stmts {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("migrate to schema version %d: %w", v, err)
				}
			}
		}
		if version == 0 {
			_, err = tx.Exec(ctx, `INSERT INTO mnemo_schema (version) VALUES ($1)`, SchemaVersion)
		} else {
			_, err = tx.Exec(ctx, `UPDATE mnemo_schema SET version = $1`, SchemaVersion)
		}
		return err
	})
}

// schemaVersion reads the version of the schema in the connection's
// current schema (the first of the search path that exists), 0 for a new
// database, and changes nothing. mnemo_schema must hold exactly one row,
// of a version from 1 to SchemaVersion, and then mnemo_collections must
// exist beside it; a missing or empty mnemo_schema is a new database only
// when mnemo_collections does not exist either. Any other state is
// ErrSchema, naming what it found.
func schemaVersion(ctx context.Context, q querier) (int64, error) {
	// A query of pg_class, not to_regclass: its lookups go through the
	// connection's catalog cache, which an Open that waited for the lock
	// may not have refreshed since it found no tables before the wait.
	var schema *string
	var table, catalog bool
	if err := q.QueryRow(ctx, `SELECT current_schema(),
		EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relname = 'mnemo_schema'),
		EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relname = 'mnemo_collections')`).Scan(&schema, &table, &catalog); err != nil {
		return 0, err
	}
	var versions []int64
	if table {
		rows, err := q.Query(ctx, `SELECT version FROM `+pgx.Identifier{*schema, "mnemo_schema"}.Sanitize())
		if err != nil {
			return 0, err
		}
		if versions, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return 0, err
		}
	}
	switch {
	case len(versions) > 1:
		slices.Sort(versions)
		return 0, fmt.Errorf("%w: mnemo_schema holds %d rows (versions %v), want one", ErrSchema, len(versions), versions)
	case len(versions) == 0 && catalog:
		return 0, fmt.Errorf("%w: mnemo_schema holds no version, but mnemo_collections exists", ErrSchema)
	case len(versions) == 0:
		return 0, nil // a new database
	}
	version := versions[0]
	if version < 1 || version > SchemaVersion {
		return 0, fmt.Errorf("%w: the database has mnemo schema version %d; this version knows 1 to %d", ErrSchema, version, SchemaVersion)
	}
	if !catalog {
		return 0, fmt.Errorf("%w: the database has mnemo schema version %d but no mnemo_collections table", ErrSchema, version)
	}
	return version, nil
}

// querier is what schemaVersion reads through: a *pgx.Conn or a pgx.Tx.
type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

// migrations[i] returns the statements that take the schema from version
// i to i+1, reading what they depend on in tx.
var migrations = []func(ctx context.Context, tx pgx.Tx) ([]string, error){
	func(context.Context, pgx.Tx) ([]string, error) {
		return []string{`CREATE TABLE mnemo_collections (
			id bigserial PRIMARY KEY,
			name text COLLATE "C" NOT NULL UNIQUE,
			config jsonb NOT NULL,
			created timestamptz NOT NULL DEFAULT now()
		)`}, nil
	},
	// 2: full text by postings, frequencies and statistics kept on write
	// (text.go), instead of a GIN index over each record's terms; each
	// collection's sequence of positions (positions.go).
	func(ctx context.Context, tx pgx.Tx) ([]string, error) {
		ids, err := collectionIDs(ctx, tx)
		if err != nil {
			return nil, err
		}
		stmts := []string{`CREATE TABLE mnemo_positions (
			collection bigint PRIMARY KEY REFERENCES mnemo_collections (id) ON DELETE CASCADE,
			next bigint NOT NULL CHECK (next >= 0)
		)`}
		for _, id := range ids {
			stmts = append(stmts, buildTextTables(id)...)
		}
		return stmts, nil
	},
	// 3: each collection's indexes over the reserved group and position
	// that the neighbours of a spread are read by (spread.go).
	func(ctx context.Context, tx pgx.Tx) ([]string, error) {
		ids, err := collectionIDs(ctx, tx)
		if err != nil {
			return nil, err
		}
		var stmts []string
		for _, id := range ids {
			stmts = append(stmts, spreadIndexes(id)...)
		}
		return stmts, nil
	},
}

// Close closes the connection pools, waiting for connections in use to
// be released. Later calls fail with mnemo.ErrClosed.
func (s *Store) Close() error {
	if s == nil || s.closed.Swap(true) {
		return nil
	}
	s.pool.Close() // waits for the calls in flight, writes under a lock among them
	if s.read != nil {
		s.read.Close()
	}
	s.releaseLocks()
	return nil
}

// CreateCollection creates a collection and its table and indexes, or
// returns the existing one when its config is the same (defaults
// applied); another config is mnemo.ErrCollectionExists.
func (s *Store) CreateCollection(ctx context.Context, name string, cfg mnemo.CollectionConfig) (mnemo.Collection, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if err := mnemo.CheckCollectionName(name); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	if err := checkConfig(cfg); err != nil {
		return nil, err
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: encode config: %w", err)
	}
	var c *Collection
	err = s.do(ctx, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
				return err
			}
			var id int64
			var have []byte
			err := tx.QueryRow(ctx, `SELECT id, config FROM mnemo_collections WHERE name = $1`, name).Scan(&id, &have)
			switch {
			case err == nil:
				old, err := decodeConfig(name, have)
				if err != nil {
					return err
				}
				if !old.Equal(cfg) {
					return fmt.Errorf("%w: %q has %+v, asked for %+v", mnemo.ErrCollectionExists, name, old, cfg)
				}
				c = s.newCollection(name, id, old)
				return nil
			case !errors.Is(err, pgx.ErrNoRows):
				return err
			}
			if err := tx.QueryRow(ctx, `INSERT INTO mnemo_collections (name, config) VALUES ($1, $2::text::jsonb) RETURNING id`, name, string(js)).Scan(&id); err != nil {
				return err
			}
			for _, stmt := range createTable(id, cfg) {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
			c = s.newCollection(name, id, cfg)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// checkConfig refuses what pgvector (or PostgreSQL's jsonb, which holds
// the config) cannot hold.
func checkConfig(cfg mnemo.CollectionConfig) error {
	for _, s := range append([]string{cfg.Embedder, cfg.Kind}, cfg.Text.Fields...) {
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("%w: %w: %q: PostgreSQL text cannot hold U+0000", mnemo.ErrInvalidConfig, ErrUnsupported, s)
		}
	}
	switch {
	case cfg.Dimension > 16000:
		return fmt.Errorf("%w: %w: dimension %d: pgvector holds at most 16000", mnemo.ErrInvalidConfig, ErrUnsupported, cfg.Dimension)
	case cfg.Index == mnemo.HNSW && cfg.Dimension > 2000:
		return fmt.Errorf("%w: %w: dimension %d: pgvector's HNSW indexes at most 2000 (use mnemo.Flat)", mnemo.ErrInvalidConfig, ErrUnsupported, cfg.Dimension)
	case cfg.Index == mnemo.HNSW && (cfg.M < 2 || cfg.M > 100):
		return fmt.Errorf("%w: %w: M %d: pgvector wants 2 to 100", mnemo.ErrInvalidConfig, ErrUnsupported, cfg.M)
	case cfg.Index == mnemo.HNSW && (cfg.EfConstruction < 4 || cfg.EfConstruction > 1000 || cfg.EfConstruction < 2*cfg.M):
		return fmt.Errorf("%w: %w: efConstruction %d: pgvector wants 4 to 1000, at least 2*M", mnemo.ErrInvalidConfig, ErrUnsupported, cfg.EfConstruction)
	}
	return nil
}

// tableName is the table of collection id, quoted.
func tableName(id int64) string {
	return pgx.Identifier{"mnemo_records_" + strconv.FormatInt(id, 10)}.Sanitize()
}

// opclass is pgvector's HNSW operator class for metric.
func opclass(m mnemo.Metric) string {
	switch m {
	case mnemo.Dot:
		return "vector_ip_ops"
	case mnemo.L2:
		return "vector_l2_ops"
	}
	return "vector_cosine_ops"
}

// createTable returns the statements that create collection id's table.
// Every part of them is a number or a constant of this package.
func createTable(id int64, cfg mnemo.CollectionConfig) []string {
	t := tableName(id)
	stmts := []string{
		fmt.Sprintf(`CREATE TABLE %s (
			id text COLLATE "C" PRIMARY KEY,
			embedding vector(%d) NOT NULL,
			content text NOT NULL,
			metadata jsonb,
			terms text[] NOT NULL,
			freqs int4[] NOT NULL,
			text_len int4 NOT NULL
		)`, t, cfg.Dimension),
	}
	stmts = append(stmts, createTextTables(id)...)
	stmts = append(stmts, spreadIndexes(id)...)
	if cfg.Index == mnemo.HNSW {
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX ON %s USING hnsw (embedding %s) WITH (m = %d, ef_construction = %d)`,
			t, opclass(cfg.Metric), cfg.M, cfg.EfConstruction))
	}
	return stmts
}

func decodeConfig(name string, b []byte) (mnemo.CollectionConfig, error) {
	var cfg mnemo.CollectionConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("%w: config of %q: %v", ErrSchema, name, err)
	}
	return cfg, nil
}

// Collection returns the named collection, or mnemo.ErrCollectionNotFound.
func (s *Store) Collection(ctx context.Context, name string) (mnemo.Collection, error) {
	c, err := s.collection(ctx, name)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// collection looks the named collection up in the catalog.
func (s *Store) collection(ctx context.Context, name string) (*Collection, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	if !storable(name) { // never created: CreateCollection refuses it
		return nil, fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
	}
	var c *Collection
	err := s.do(ctx, func(ctx context.Context) error {
		var id int64
		var js []byte
		err := s.reader().QueryRow(ctx, `SELECT id, config FROM mnemo_collections WHERE name = $1`, name).Scan(&id, &js)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
		}
		if err != nil {
			return err
		}
		cfg, err := decodeConfig(name, js)
		if err != nil {
			return err
		}
		c = s.newCollection(name, id, cfg)
		return nil
	})
	return c, err
}

// Collections returns the names of all collections, sorted byte-wise.
func (s *Store) Collections(ctx context.Context) ([]string, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	var names []string
	err := s.do(ctx, func(ctx context.Context) error {
		rows, err := s.reader().Query(ctx, `SELECT name FROM mnemo_collections ORDER BY name`)
		if err != nil {
			return err
		}
		names, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return names, err
}

// DropCollection deletes a collection, its table and its records. Handles
// of it (here or in other processes) then fail with
// mnemo.ErrCollectionNotFound.
func (s *Store) DropCollection(ctx context.Context, name string) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	if !storable(name) {
		return fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
	}
	return s.do(ctx, func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
				return err
			}
			var id int64
			err := tx.QueryRow(ctx, `DELETE FROM mnemo_collections WHERE name = $1 RETURNING id`, name).Scan(&id)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("%w: %q", mnemo.ErrCollectionNotFound, name)
			}
			if err != nil {
				return err
			}
			for _, stmt := range append([]string{`DROP TABLE IF EXISTS ` + tableName(id)}, dropTextTables(id)...) {
				if _, err := tx.Exec(ctx, stmt); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// enter checks the store is open and ctx is live.
func (s *Store) enter(ctx context.Context) error {
	if s == nil {
		// A nil *Store given where a mnemo.Store goes is not a nil
		// interface: fail as a closed one does, not with a panic.
		return fmt.Errorf("%w: nil *postgres.Store", mnemo.ErrClosed)
	}
	if s.closed.Load() {
		return mnemo.ErrClosed
	}
	return ctx.Err()
}

// do runs f, retrying it with backoff while it fails with a connection
// error, for up to s.retry; it then fails with ErrUnavailable. Every f
// given to do is idempotent, or (Reserve) harmless to repeat. Errors from
// the server keep their meaning: an undefined table (a dropped
// collection) becomes mnemo.ErrCollectionNotFound, a write refused by a
// read-only server ErrReadOnly.
func (s *Store) do(ctx context.Context, f func(context.Context) error) error {
	start := time.Now()
	wait := 20 * time.Millisecond
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !transient(err) {
			return serverError(err)
		}
		if s.closed.Load() {
			return mnemo.ErrClosed
		}
		if s.retry < 0 || time.Since(start)+wait > s.retry {
			s.log.Error("server unavailable: giving up", "err", err, "after", time.Since(start))
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		s.log.Warn("connection error: retrying", "err", err, "wait", wait)
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// sleep waits for d, or until ctx is done and then returns its error.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// transient reports whether err is a broken or refused connection, or a
// server that is starting or shutting down: worth retrying.
func transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", // admin shutdown, crash shutdown, cannot connect now
			"53300",          // too many connections
			"40001", "40P01": // serialization failure, deadlock
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08" // connection exceptions
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || errors.As(err, &ne) || errors.As(err, &ce) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		pgconn.Timeout(err) || isClosedConn(err)
}

// isClosedConn matches pgx's errors for a connection it already knows is
// dead (it has no sentinel for them).
func isClosedConn(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"conn closed", "connection reset", "broken pipe", "failed to connect", "conn busy", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// serverError gives a server error the engine's meaning where there is
// one.
func serverError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" && strings.HasSuffix(pe.Message, "does not exist") {
		// undefined_table: a dropped collection's (the code also names a
		// statement's own mistakes, which are not)
		return fmt.Errorf("%w: %v", mnemo.ErrCollectionNotFound, err)
	}
	if errors.As(err, &pe) && pe.Code == "25006" { // read_only_sql_transaction: a standby
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	if errors.As(err, &pe) {
		return fmt.Errorf("postgres: %w", err)
	}
	return err
}

// collectionIDs lists the ids of the collections, for a migration that
// changes each one's tables.
func collectionIDs(ctx context.Context, tx pgx.Tx) ([]int64, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM mnemo_collections ORDER BY id`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
