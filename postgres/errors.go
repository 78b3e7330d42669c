package postgres

import "errors"

// Sentinel errors, matched with errors.Is. Bad records, filters, queries
// and configs get package mnemo's sentinels (mnemo.ErrDimension,
// mnemo.ErrBadFilter, ...), as on the engine, so that callers match them
// the same way whichever backend they use.
var (
	// ErrUnavailable reports a call that failed because the server could
	// not be reached, or the connection broke, and kept failing for
	// Options.RetryTimeout. The error wraps the last connection error. A
	// write that returns it may or may not have been committed (its
	// commit may have been lost with the connection); repeating it is
	// safe, since writes are idempotent by ID.
	ErrUnavailable = errors.New("postgres: server unavailable")
	// ErrSchema reports a database whose mnemo schema is newer than this
	// package knows, or otherwise unusable.
	ErrSchema = errors.New("postgres: unsupported schema")
	// ErrReadOnly reports a write refused because the server is read-only
	// (SQLSTATE 25006 read_only_sql_transaction), such as a hot standby:
	// Upsert, Delete, Reserve, Advance, CreateCollection and
	// DropCollection there wrap it,
	// with the server's error, and change nothing. Open wraps it when a
	// read-only server's schema is missing or older than SchemaVersion,
	// since the schema must be created (or migrated) on the primary, and
	// when the read server (Options.ReadDSN) still has no current schema
	// after Options.RetryTimeout, on which Open never writes.
	ErrReadOnly = errors.New("postgres: server is read-only")
	// ErrUnsupported reports a record or config that PostgreSQL cannot
	// hold though the engine can: text containing U+0000 (refused as
	// mnemo.ErrInvalidRecord too, or as mnemo.ErrInvalidConfig in a
	// config's embedder, kind or text fields), or more dimensions than
	// pgvector indexes (refused as mnemo.ErrInvalidConfig too).
	ErrUnsupported = errors.New("postgres: not supported by PostgreSQL")
)
