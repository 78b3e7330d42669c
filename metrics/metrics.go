// Package metrics is mnemo's metrics hook: a Recorder receives one Event
// per operation of a backend (the embedded engine, the PostgreSQL
// backend) or of a memory adapter, and turns it into whatever the
// program measures with.
//
// The hook is an option (engine.Options.Metrics, postgres.Options.Metrics,
// the adapters' Options.Metrics). Left nil it costs nothing: no clock is
// read and no Event is built. Package expvarmetrics publishes counters
// and latency histograms through the standard library's expvar; the
// module github.com/mnemodb/mnemo/integrations/otel maps events to
// OpenTelemetry instruments. Anything else is a Func away.
//
// # Operations
//
// Event.Op names the operation. Every event sets Duration (the wall time
// of the operation) and Err (nil on success, else the error the
// operation returned or, for one that is not a call, met); the other
// fields are set as listed. Collection is the collection's name where
// the operation has one.
//
//	Op             emitted by          fields set
//	upsert         engine, postgres    Collection; Records: records in the call;
//	                                   Bytes: the encoded batch (engine) or the
//	                                   records' size, vectors, content and
//	                                   metadata (postgres)
//	delete         engine, postgres    Collection; Records: records that existed
//	                                   and were deleted
//	query          engine, postgres    Collection; Mode: vector, text or hybrid;
//	                                   Plan: graph, filtered-graph, exact or
//	                                   text (for hybrid, the vector side's);
//	                                   Records: hits returned
//	commit         engine              Collection (empty for the database's own
//	                                   commits: creating or dropping a
//	                                   collection); Bytes: the batch
//	sync           engine              as commit, for a commit that waited for
//	                                   the log to reach stable storage (every
//	                                   commit unless Options.NoSync; the
//	                                   database's own always); Duration is the
//	                                   commit's, fsync included
//	checkpoint     engine              Collection; Records: vectors in the
//	                                   index; Bytes: the checkpoint file
//	text_rebuild   engine              Collection; Records: records whose
//	                                   full-text entry Open made from the record
//	                                   (entries missing or damaged)
//	index_rebuild  engine              Collection; Records: records indexed when
//	                                   Open rebuilt an index (no checkpoint, or
//	                                   a damaged one)
//	embed          memory adapters     Records: texts embedded in one call of
//	                                   the embedder; Bytes: their length in
//	                                   bytes; Collection when the texts are
//	                                   for one (vectorstore, docstore's index)
//
// An upsert of records is also a commit (and a sync) on the engine; a
// checkpoint commits its descriptor. On PostgreSQL the server's own
// statistics (pg_stat_statements) describe commits and syncs.
//
// A failed operation sets Err and otherwise what it knew when it failed;
// recorders count it as an error of its Op (expvarmetrics does not add
// it to the Op's own counters).
//
// # Concurrency
//
// Backends call Record from the goroutine that ran the operation, so
// from many goroutines at once: a Recorder must be safe for concurrent
// use. Record runs on the operation's path and should return quickly;
// it must not call back into the backend that called it.
package metrics

import "time"

// Operation names (Event.Op). The table in the package doc says who emits
// each and which fields it sets.
const (
	OpUpsert       = "upsert"
	OpDelete       = "delete"
	OpQuery        = "query"
	OpCommit       = "commit"
	OpSync         = "sync"
	OpCheckpoint   = "checkpoint"
	OpTextRebuild  = "text_rebuild"
	OpIndexRebuild = "index_rebuild"
	OpEmbed        = "embed"
)

// Event describes one finished operation. Fields an operation does not
// set are zero (see the package doc). An Event is a value: a Recorder may
// keep it, but Err may refer to memory of the caller's (such as an
// error wrapping a record ID).
type Event struct {
	Op         string
	Collection string
	Mode       string
	Plan       string
	Records    int
	Bytes      int64
	Duration   time.Duration
	Err        error
}

// Recorder receives events. Implementations must be safe for concurrent
// use by multiple goroutines and should not block.
type Recorder interface {
	Record(Event)
}

// Func adapts a function to a Recorder. The function must be safe for
// concurrent use by multiple goroutines.
type Func func(Event)

// Record calls f(e).
func (f Func) Record(e Event) { f(e) }

// Multi returns a Recorder that passes each event to every recorder in
// order, skipping nil ones. With no non-nil recorder it returns nil, so
// that the hook stays off.
func Multi(recorders ...Recorder) Recorder {
	var rs multi
	for _, r := range recorders {
		if r != nil {
			rs = append(rs, r)
		}
	}
	switch len(rs) {
	case 0:
		return nil
	case 1:
		return rs[0]
	}
	return rs
}

type multi []Recorder

func (m multi) Record(e Event) {
	for _, r := range m {
		r.Record(e)
	}
}
