// Package engine is mnemo's embedded database: named collections of records
// (an ID, a vector, text content and JSON metadata) stored in one directory,
// every acknowledged write durable, nearest-neighbour queries with metadata
// filters, and a fast restart. It joins the index (package index) and the
// logical log (package wal) on top of Pebble.
//
// The engine speaks the data model of package mnemo (the module root):
// its collections take mnemo.Record, mnemo.Query and mnemo.CollectionConfig
// and return mnemo.Hit, and bad input is reported with mnemo's sentinel
// errors, as on every backend. DB.Store returns a database as a
// mnemo.Store, for the memory adapters and the framework integrations,
// which then run unchanged on PostgreSQL (package postgres).
//
// # Using it
//
//	db, err := engine.Open(dir, nil)           // or &engine.Options{InMemory: true}
//	notes, err := db.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 384})
//	ids, err := notes.Upsert(ctx, mnemo.Record{Vector: v, Content: "...", Metadata: m})
//	f, err := mnemo.ParseFilter(`{"source": "web", "year": {"$gte": 2020}}`)
//	hits, err := notes.Query(ctx, mnemo.Query{Vector: q, K: 10, Filter: f})
//	err = db.Close()
//
// A DB and its Collections are safe for concurrent use by multiple
// goroutines.
//
// # Durability
//
// An Upsert or Delete is one Pebble batch holding the record changes (each
// record and its full-text entry) and one log record naming what changed;
// it commits with fsync (unless Options.NoSync), so when the call returns
// nil the change survives any crash, and when it returns an error nothing
// changed. Concurrent writers share fsyncs through Pebble's group commit.
// Only after the commit is the in-memory index updated. A reservation of
// positions (Collection.Reserve, mnemo.Sequencer) is committed without an
// fsync of its own: the records that use the positions are written after
// it to the same log, which Pebble replays as a prefix.
//
// What can go wrong below that is handled in one place each: a directory
// knows it is a database (its MNEMO file; Open refuses another directory
// with ErrNotDatabase), Pebble's fatal errors become the DB's errors
// (ErrFailed) instead of ending the process, writes are refused with
// ErrNoSpace below a free-space floor (Options.MinFreeSpace), and writes
// lost from Pebble's log are detected at Open (from its SEQMARK file, as
// corruption: IsCorruption). README's "durability
// promise" section says exactly what is detected and what is not.
//
// # Restart
//
// Each collection's index is checkpointed to a file of its own (a snapshot
// written to a temporary file, fsynced, renamed, directory fsynced; then a
// descriptor naming it and the log position it covers is stored in Pebble)
// on Close and in the background after Options.CheckpointEvery logged
// writes; the log behind a checkpoint is truncated. Open loads the newest
// checkpoint and replays the log after it, which only re-reads the records
// the log names, so a restart costs a file read and a short replay instead
// of rebuilding the graph. A checkpoint that is missing, damaged or does not
// agree with the records, or a damaged log, makes Open rebuild the index
// from the records (the source of truth) and checkpoint it at once;
// Collection.Stats says how each collection was opened and why. A damaged
// record is never skipped: Open fails with an error for which IsCorruption
// is true.
//
// # Backup and space
//
// DB.Backup writes a consistent copy of a live database into a new
// directory (Pebble's checkpoint, hard-linked where it can be, plus the
// index checkpoints); restore is opening the copy. DB.Compact gives the
// space of deleted records back.
//
// # Live access
//
// The process that holds a database open for writing serves read-only
// requests and backups to other processes of the same user over a Unix
// socket in its directory, live.sock (mode 0600, peers' credentials
// checked on both sides); DialLive is the client, a read-only mnemo.Store
// with Stats, Verify and Backup run by the holder. Options.NoLiveAccess
// turns it off. docs/live-access.md in the repository describes it.
//
// On-disk layout. Keys in Pebble start with a tag byte; cid is the
// collection's numeric id, 4 bytes big-endian, so a collection's records
// sort by ID and its 'd', 'l' and 'x' keys form contiguous ranges, which
// Drop deletes with range deletions:
//
//	'c' name                 collection id and config (JSON)
//	'm' "nextcollection"     next collection id (u32 big-endian)
//	'd' cid(4) recordID      record: version, index key, vector, content, metadata, CRC-32C
//	'l' cid(4) seq(8)        logical log (package wal): one record per write batch
//	'p' cid(4)               checkpoint descriptor (JSON): file, log sequence, size, time
//	'x' cid(4) key(8)        full-text entry of the record with that index key: length and
//	                         term frequencies, checked when read, in the record's batch;
//	                         none when the collection's full-text index is disabled
//	's' cid(4)               the collection's next position (mnemo.Sequencer), u64 big-endian;
//	                         none while its sequence is unset
//
// Files beside Pebble's in <dir>:
//
//	checkpoints/<cid>-<seq>.hnsw   the index snapshot of an HNSW collection (package index format)
//	checkpoints/<cid>-<seq>.flat   the index snapshot of a flat collection (package index format)
//	checkpoints/<file>.tmp         a snapshot being written, renamed to <file> once fsynced
//	MNEMO                          identity: format, database id, creation time (JSON)
//	SEQMARK                        last acknowledged log sequence per collection
//	BACKUP-INCOMPLETE              only in a backup being written: Open refuses it
//	live.sock                      live access's socket, while a process holds the database
//
// A checkpoint file is named by the collection's id and the last log
// sequence it covers, in hex (8 and 16 digits), and its extension is the
// collection's index kind. An Open that may write removes the checkpoint
// files no descriptor names (temporary ones included), which a crash
// between the steps of a checkpoint can leave.
//
// # Queries, distances and filters
//
// Hits carry the collection metric's raw distance (cosine distance in
// [0, 2], negative inner product, squared L2) and one similarity, larger is
// nearer: 1 - d for cosine, the inner product for dot, 1/(1 + d) for L2.
// Filters use Chroma's operators ($eq, $ne, $gt, $gte, $lt, $lte, $in,
// $nin, $exists, $and, $or); see Filter. With a filter, the query planner
// scores exactly the admitted records when they are few (found through an
// in-memory inverted index of metadata values) and otherwise filters inside
// the graph walk; either way selective filters keep their recall.
//
// Defaults are safe: a query that sets no Ef on a small collection (up to
// n*(dimension+16) = 8,000,000, e.g. 20,000 vectors of 384 dimensions) is
// answered by an exact scan, which there costs less than the graph takes
// to reach a recall of 0.95 on data without structure (figures in
// docs/performance-notes.md; Collection.QueryPlan says which plan a query
// takes); larger collections walk the graph at EfSearch (default 64:
// recall@10 0.95 or more on the benchmark sets in the README). To trade
// recall for speed, set Query.Ef (which chooses the graph at any size) or
// the collection's EfSearch lower; for more recall, higher, or set
// Query.Exact.
//
// # Errors
//
// Bad input (dimension, non-finite values, a zero vector under cosine, an
// empty, over-long or non-UTF-8 ID, metadata JSON cannot carry, an unknown
// collection, a malformed filter, use after Close) returns an error that
// matches one of package mnemo's sentinels with errors.Is
// (mnemo.ErrDimension, mnemo.ErrInvalidID, mnemo.ErrCollectionNotFound,
// mnemo.ErrClosed, ...), and writes nothing. This package's own sentinels
// (ErrLocked, ErrNoSpace, ErrCorrupt, ...) report the database's state.
package engine
