// Package postgres stores mnemo collections in PostgreSQL with the
// pgvector extension, behind the same interface as the embedded engine
// (mnemo.Store), so that several processes on several machines can
// share one agent memory. It uses pgx and needs no cgo.
//
//	store, err := postgres.Open(ctx, "postgres://user@host/db", nil)
//	defer store.Close()
//	notes, err := store.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 384})
//	ids, err := notes.Upsert(ctx, mnemo.Record{Vector: v, Content: "Paul works at Google"})
//	hits, err := notes.Query(ctx, mnemo.Query{Vector: q, Text: "where does Paul work", K: 5})
//
// # Schema
//
// Open first reads the schema's version and, when it is SchemaVersion,
// changes nothing and takes no lock. Otherwise it creates (or migrates)
// the schema under a transaction-scoped advisory lock, so concurrent
// Opens are safe. The version of the schema is the one row of
// mnemo_schema; a version this package does not know (newer, or below 1),
// more than one row, or none beside an existing mnemo_collections is
// ErrSchema, and Open then changes nothing.
// Collections are listed in mnemo_collections (name, config as JSON);
// each has a table of its own, named by its numeric id so that any
// collection name is safe:
//
//	mnemo_records_<id> (
//	    id        text COLLATE "C" PRIMARY KEY,   -- byte order, as the engine scans
//	    embedding vector(<dimension>) NOT NULL,
//	    content   text NOT NULL,
//	    metadata  jsonb,                          -- NULL for none
//	    terms     text[] NOT NULL,                -- the engine analyzer's distinct terms, sorted
//	    freqs     int4[] NOT NULL,                -- each term's frequency
//	    text_len  int4 NOT NULL                   -- the text's length in terms
//	)
//	HNSW index on embedding (vector_cosine_ops, vector_ip_ops or vector_l2_ops
//	by metric; m and ef_construction from the config, 16 and 200 by default)
//	mnemo_records_<id>_spread on (metadata -> 'mnemo.group', the integer at
//	'mnemo.pos' as float8), and mnemo_records_<id>_spread_pos on the latter:
//	the memory adapters' conversations and positions, which a query's
//	Spread reads its neighbours by
//
//	mnemo_postings_<id>  (term, id, tf, len)  PRIMARY KEY (term, id) INCLUDE (tf, len)
//	mnemo_terms_<id>     (term, shard, df, max_tf, min_len)
//	mnemo_textstats_<id> (shard, n, total)
//
// The last three are the collection's full-text index, written in the
// same transaction as the records: a posting per distinct term of a
// record, each term's document frequency, and the number and total length
// of the records with text. Frequencies and totals are deltas in one of
// 16 shards, chosen by the writing server process, so that concurrent
// writers do not queue on one counter row; readers sum the shards. Each
// term also keeps the largest frequency and shortest length it was
// stored with, which bound what it can add to a score.
//
// One table per collection, rather than one table with a collection
// column: pgvector's HNSW index needs a column of one dimension and one
// operator class, and collections differ in both; a table per collection
// also keeps each collection's index, statistics and full-text counts to
// its own rows.
//
// Each collection's sequence of positions (mnemo.Sequencer, which the
// memory adapters number their memories with) is a row of one table,
// absent until the sequence is started, deleted with the collection:
//
//	mnemo_positions (
//	    collection bigint PRIMARY KEY REFERENCES mnemo_collections (id) ON DELETE CASCADE,
//	    next       bigint NOT NULL CHECK (next >= 0)   -- the next position Reserve returns
//	)
//
// Reserve advances the row in one UPDATE, its own transaction, so the
// server's row lock orders the reservations of every process, and each
// is committed before Reserve returns.
//
// # Semantics
//
// Every check is the engine's (mnemo.CheckRecord, CheckQuery, ...), so the
// same bad record, query or filter is refused with the same sentinel
// error. Distances have the engine's meaning: cosine distance in [0, 2],
// the negative inner product, or the squared L2 distance; similarities are
// mnemo.Similarity of them. Metadata filters are translated into SQL over
// the jsonb column with the evaluator's semantics (type mismatches are
// false, $ne and $nin admit absent fields, strings compare byte-wise,
// numbers as float64), every value and field name a bound parameter. Text
// is analyzed by the engine's analyzer (package analysis) in the
// client, and ranked by the engine's BM25 formula computed in SQL over the
// postings, so both backends tokenize and score alike. Like the engine,
// a text query prunes by MaxScore: the records of its rarest terms set a
// threshold, and the postings lists of common terms whose bounds cannot
// lift a record over it are not read, only probed for the candidates
// that could still make the top K. The ranking is exact.
// Hybrid queries fuse the two sides with mnemo.FuseScores and rank them
// with mnemo.SortHits. A vector or text side orders equal scores by
// record ID, byte-wise, and when more records tie than it has places
// keeps the smallest IDs (the HNSW index returns an arbitrary part of a
// tie, so a tie at the K-th place is read again exactly); equal fused
// scores keep the sides' order. The engine does the same, so both
// backends return the same records in the same order for a tie. A filtered vector
// query runs the HNSW index with pgvector's iterative scan and falls back
// to an exact scan when that returns fewer than K hits, so it returns
// min(K, admitted) hits as the engine does.
//
// Differences from the engine: PostgreSQL text cannot hold U+0000, so a
// record whose content or metadata contains it is refused
// (mnemo.ErrInvalidRecord wrapped with ErrUnsupported), and so is a
// config whose embedder, kind or text fields do (mnemo.ErrInvalidConfig
// wrapped with ErrUnsupported); pgvector indexes at most 2000 dimensions
// (larger collections need mnemo.Flat), holds at most 16000, and builds
// an HNSW index only with M from 2 to 100 and efConstruction from 4 to
// 1000 and at least 2*M (the engine takes M up to mnemo.MaxM), refused as
// mnemo.ErrInvalidConfig wrapped with ErrUnsupported.
//
// # Read replicas
//
// Read-only work can go to a hot standby once the primary has created
// the schema (any Open there does): Open on the standby only reads it, and
// Collections, Collection, Get, Scan, Count and Query work as on the
// primary, over what the standby has replayed so far. Writes there
// (Upsert, Delete, Reserve, Advance, CreateCollection, DropCollection)
// fail with an error
// wrapping ErrReadOnly and change nothing, and Open of a standby whose
// schema is missing or older than SchemaVersion fails with ErrReadOnly
// too. TryLock works on a standby, but PostgreSQL's advisory locks belong
// to the server that took them: a lock taken on the standby does not
// exclude a holder on the primary, nor the other way round.
//
// One Store can use both: Options.ReadDSN names the standby, and the
// Store opened on the primary sends the calls that only read
// (Collections, Collection, Get, Scan, Count and Query) there, and writes
// and locks to the primary. Open only reads the schema's version on the
// standby, waiting up to Options.RetryTimeout for it to replay a schema
// the primary just made.
//
// Reads on a standby may not see one's own writes. PostgreSQL replicates
// asynchronously by default: a write returns once the primary committed
// it, and the standby applies it a moment later, so a Get, Scan, Count,
// Query or Collection lookup on the standby right after a write returned
// may not see it (nor a collection just created: its handle from
// CreateCollection reads a table the standby may not have yet, and fails
// with mnemo.ErrCollectionNotFound until it has). A caller that must read
// its own writes reads them from a Store without ReadDSN, or makes the
// replication synchronous up to the apply: with synchronous_commit =
// remote_apply on the primary and the standby named in its
// synchronous_standby_names, a write returns only once the standby has
// applied it, and reads there see it (at the cost of a round trip to the
// standby in every write, and writes that wait while that standby is
// down; see Durability).
//
// # Durability and failures
//
// A write returns after PostgreSQL committed it (a batch is one
// transaction). Calls that meet a broken connection or an unreachable
// server are retried for Options.RetryTimeout with backoff (every
// operation here is idempotent: upserts by ID, deletes, reads; but for
// Reserve, whose retry after a commit that went through unseen reserves
// again and leaves the first reservation as a gap), then fail with
// ErrUnavailable; the pool reconnects by itself once the server is back,
// without reopening the Store.
//
// Every call honours its context. When the primary replicates
// synchronously (synchronous_standby_names set, synchronous_commit on,
// remote_write or remote_apply), a write's commit waits for a synchronous
// standby to confirm it, for as long as it takes: indefinitely while no
// such standby is connected. PostgreSQL bounds that wait with no timeout
// of its own (statement_timeout ends before the commit), so only the
// context does: when it ends, the call returns the context's error, and
// the Store closes the connection and asks the server to cancel the
// wait. PostgreSQL then keeps the transaction, which it has already
// committed locally (it warns "canceling wait for synchronous replication
// ... already committed locally"), but it may not have reached the
// standby: the write may or may not be visible, on the primary and later
// on the standbys. Writing it again once a standby is back makes sure.
// A call without a deadline waits as long as the server does. A process
// that ends during the wait without cancelling it (killed, say) leaves
// its server backend waiting, holding the locks of the rows it wrote, so
// that later writes of those rows wait too, until a synchronous standby
// confirms the commit or an administrator cancels the wait
// (pg_cancel_backend).
package postgres
