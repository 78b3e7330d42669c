// Package expvarmetrics is a metrics.Recorder that publishes mnemo's
// operations as counters and latency histograms in an expvar.Map, which
// net/http/pprof's neighbour expvar serves as JSON at /debug/vars.
//
// The map holds these variables (see metrics for the operations):
//
//	upserts, upsert_records              upsert calls, records written
//	upsert_seconds                       histogram of upsert latency
//	deletes, delete_records              delete calls, records deleted
//	delete_seconds                       histogram of delete latency
//	queries                              map: queries by "mode/plan"
//	query_seconds                        map: latency histogram by "mode/plan"
//	commits, commit_bytes                batch commits, bytes committed
//	commit_seconds                       histogram of commit latency
//	syncs, sync_seconds                  synced commits, their latency
//	checkpoints, checkpoint_bytes        checkpoints, bytes written
//	checkpoint_seconds                   histogram of checkpoint latency
//	text_rebuilds, text_rebuild_records  full-text rebuilds at open, records
//	index_rebuilds, index_rebuild_records
//	index_rebuild_seconds                index rebuilds at open, records, latency
//	embeds, embed_records, embed_seconds adapter embedding calls, texts, latency
//	errors                               map: failed operations by op
//
// A failed operation counts only in errors. Counters are expvar.Int; a
// histogram is a Histogram, shown as
//
//	{"count": 3, "sum": 0.0042, "buckets": {"1e-06": 0, "4e-06": 1, ..., "+Inf": 3}}
//
// with cumulative buckets (each counts the observations at most its
// bound, in seconds), bounds 1µs·4^i for i = 0..12 (1µs to about 17s).
package expvarmetrics

import (
	"expvar"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemodb/mnemo/metrics"
)

// Recorder publishes events in an expvar.Map. It is safe for concurrent
// use by multiple goroutines; Record does not allocate once a query's
// mode/plan pair has been seen.
type Recorder struct {
	m *expvar.Map

	upserts, upsertRecords                      expvar.Int
	deletes, deleteRecords                      expvar.Int
	commits, commitBytes                        expvar.Int
	syncs                                       expvar.Int
	checkpoints, checkpointBytes                expvar.Int
	textRebuilds, textRebuildRecords            expvar.Int
	indexRebuilds, indexRebuildRecords          expvar.Int
	embeds, embedRecords                        expvar.Int
	upsertSeconds, deleteSeconds, commitSeconds Histogram
	syncSeconds, checkpointSeconds              Histogram
	indexRebuildSeconds, embedSeconds           Histogram
	queries, querySeconds, errors               expvar.Map
	queryMu                                     sync.RWMutex
	queryVars                                   map[queryKey]*queryVar // protected by queryMu
	errorMu                                     sync.RWMutex
	errorVars                                   map[string]*expvar.Int // protected by errorMu
}

type queryKey struct{ mode, plan string }

type queryVar struct {
	n       expvar.Int
	seconds Histogram
}

// New returns a Recorder that fills m (which it may share with other
// variables; the names above are its). Use Publish for a map of its own
// under a top-level expvar name.
func New(m *expvar.Map) *Recorder {
	r := &Recorder{m: m, queryVars: map[queryKey]*queryVar{}, errorVars: map[string]*expvar.Int{}}
	for name, v := range map[string]expvar.Var{
		"upserts": &r.upserts, "upsert_records": &r.upsertRecords, "upsert_seconds": &r.upsertSeconds,
		"deletes": &r.deletes, "delete_records": &r.deleteRecords, "delete_seconds": &r.deleteSeconds,
		"queries": &r.queries, "query_seconds": &r.querySeconds,
		"commits": &r.commits, "commit_bytes": &r.commitBytes, "commit_seconds": &r.commitSeconds,
		"syncs": &r.syncs, "sync_seconds": &r.syncSeconds,
		"checkpoints": &r.checkpoints, "checkpoint_bytes": &r.checkpointBytes, "checkpoint_seconds": &r.checkpointSeconds,
		"text_rebuilds": &r.textRebuilds, "text_rebuild_records": &r.textRebuildRecords,
		"index_rebuilds": &r.indexRebuilds, "index_rebuild_records": &r.indexRebuildRecords,
		"index_rebuild_seconds": &r.indexRebuildSeconds,
		"embeds":                &r.embeds, "embed_records": &r.embedRecords, "embed_seconds": &r.embedSeconds,
		"errors": &r.errors,
	} {
		m.Set(name, v)
	}
	return r
}

// Publish returns a Recorder over a new expvar.Map published under name
// (expvar.NewMap). Like expvar.Publish it panics if name is taken, so a
// program calls it once per name.
func Publish(name string) *Recorder { return New(expvar.NewMap(name)) }

// Map returns the map the Recorder fills.
func (r *Recorder) Map() *expvar.Map { return r.m }

// Record counts e. It is safe for concurrent use.
func (r *Recorder) Record(e metrics.Event) {
	if e.Err != nil {
		r.errorVar(e.Op).Add(1)
		return
	}
	switch e.Op {
	case metrics.OpUpsert:
		r.upserts.Add(1)
		r.upsertRecords.Add(int64(e.Records))
		r.upsertSeconds.Observe(e.Duration)
	case metrics.OpDelete:
		r.deletes.Add(1)
		r.deleteRecords.Add(int64(e.Records))
		r.deleteSeconds.Observe(e.Duration)
	case metrics.OpQuery:
		q := r.queryVar(e.Mode, e.Plan)
		q.n.Add(1)
		q.seconds.Observe(e.Duration)
	case metrics.OpCommit:
		r.commits.Add(1)
		r.commitBytes.Add(e.Bytes)
		r.commitSeconds.Observe(e.Duration)
	case metrics.OpSync:
		r.syncs.Add(1)
		r.syncSeconds.Observe(e.Duration)
	case metrics.OpCheckpoint:
		r.checkpoints.Add(1)
		r.checkpointBytes.Add(e.Bytes)
		r.checkpointSeconds.Observe(e.Duration)
	case metrics.OpTextRebuild:
		r.textRebuilds.Add(1)
		r.textRebuildRecords.Add(int64(e.Records))
	case metrics.OpIndexRebuild:
		r.indexRebuilds.Add(1)
		r.indexRebuildRecords.Add(int64(e.Records))
		r.indexRebuildSeconds.Observe(e.Duration)
	case metrics.OpEmbed:
		r.embeds.Add(1)
		r.embedRecords.Add(int64(e.Records))
		r.embedSeconds.Observe(e.Duration)
	}
}

// queryVar returns the counter and histogram of a mode/plan pair,
// publishing them the first time.
func (r *Recorder) queryVar(mode, plan string) *queryVar {
	k := queryKey{mode, plan}
	r.queryMu.RLock()
	q := r.queryVars[k]
	r.queryMu.RUnlock()
	if q != nil {
		return q
	}
	r.queryMu.Lock()
	defer r.queryMu.Unlock()
	if q = r.queryVars[k]; q == nil {
		q = new(queryVar)
		r.queryVars[k] = q
		name := mode + "/" + plan
		r.queries.Set(name, &q.n)
		r.querySeconds.Set(name, &q.seconds)
	}
	return q
}

func (r *Recorder) errorVar(op string) *expvar.Int {
	r.errorMu.RLock()
	v := r.errorVars[op]
	r.errorMu.RUnlock()
	if v != nil {
		return v
	}
	r.errorMu.Lock()
	defer r.errorMu.Unlock()
	if v = r.errorVars[op]; v == nil {
		v = new(expvar.Int)
		r.errorVars[op] = v
		r.errors.Set(op, v)
	}
	return v
}

// Bounds are the upper bounds of a Histogram's buckets: 1µs·4^i, i =
// 0..12. Observations above the last fall in the +Inf bucket.
var Bounds = func() [13]time.Duration {
	var b [13]time.Duration
	for i := range b {
		b[i] = time.Microsecond << (2 * i)
	}
	return b
}()

// Histogram is a latency histogram over the fixed Bounds. Its zero value
// is empty and ready; it is safe for concurrent use, and Observe neither
// locks nor allocates.
type Histogram struct {
	count   atomic.Uint64
	sum     atomic.Int64 // nanoseconds
	buckets [len(Bounds) + 1]atomic.Uint64
}

// Observe adds one observation of d.
func (h *Histogram) Observe(d time.Duration) {
	i := 0
	for i < len(Bounds) && d > Bounds[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sum.Add(int64(d))
	h.count.Add(1)
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 { return h.count.Load() }

// Sum returns the total of the observations.
func (h *Histogram) Sum() time.Duration { return time.Duration(h.sum.Load()) }

// Buckets returns the cumulative count of each bucket: element i counts
// the observations at most Bounds[i], the last one all of them. Read
// while observations go on, the counts are each exact but may be of
// slightly different moments.
func (h *Histogram) Buckets() []uint64 {
	out := make([]uint64, len(h.buckets))
	var n uint64
	for i := range h.buckets {
		n += h.buckets[i].Load()
		out[i] = n
	}
	return out
}

// String renders the histogram as JSON (expvar.Var).
func (h *Histogram) String() string {
	var b strings.Builder
	b.WriteString(`{"count": `)
	b.WriteString(strconv.FormatUint(h.Count(), 10))
	b.WriteString(`, "sum": `)
	b.WriteString(strconv.FormatFloat(h.Sum().Seconds(), 'g', -1, 64))
	b.WriteString(`, "buckets": {`)
	for i, n := range h.Buckets() {
		if i > 0 {
			b.WriteString(", ")
		}
		le := "+Inf"
		if i < len(Bounds) {
			le = strconv.FormatFloat(Bounds[i].Seconds(), 'g', -1, 64)
		}
		b.WriteString(`"` + le + `": ` + strconv.FormatUint(n, 10))
	}
	b.WriteString("}}")
	return b.String()
}
