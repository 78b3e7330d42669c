package engine

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/mnemodb/mnemo/index"
)

// Query describes a nearest-neighbour query.
type Query struct {
	// Vector is the query; its length is the collection's dimension.
	Vector []float32
	// K is the number of hits wanted; zero means 10.
	K int
	// Ef is the HNSW candidate-list size; zero means the collection's
	// EfSearch. Larger is slower and more accurate. A query without Ef on
	// a small collection (n*(dimension+16) up to 20,000*400) is answered
	// by an exact scan instead; setting Ef chooses the graph at any size.
	Ef int
	// Filter restricts the hits to records whose metadata it admits (nil:
	// all).
	Filter *Filter
	// MinSimilarity, when set, drops hits whose Similarity is below it (a
	// hit exactly at the threshold is kept).
	MinSimilarity *float32
	// Exact forces an exact scan instead of the graph search.
	Exact bool
	// WithVectors fills Hit.Record.Vector. Without it a query answers from
	// memory (metadata, and contents up to 1 KiB, are kept there) and reads
	// the disk only for larger contents.
	WithVectors bool
}

// Hit is one query result.
type Hit struct {
	Record Record
	// Distance is the raw distance of the collection's metric: cosine
	// distance in [0, 2], negative inner product, or squared L2.
	Distance float32
	// Similarity is Similarity(metric, Distance): larger is nearer.
	Similarity float32
}

// Plan names how a query was answered (see Collection.Query).
type Plan string

// Plans.
const (
	PlanGraph         Plan = "graph"          // index search, no filter
	PlanFilteredGraph Plan = "filtered-graph" // index search, filter evaluated during the walk
	PlanExact         Plan = "exact"          // exact scan over the admitted records
)

// Query returns up to K records nearest to q.Vector, best first.
//
// A query that sets no Ef on a small collection (see Query.Ef) scans
// every admitted record: exact, and at that size as fast as the graph.
//
// With a filter, the engine chooses a plan: when the records the filter
// admits are few (found through its in-memory postings of metadata values,
// or by evaluating the filter over a sample and then over every record),
// it scores exactly those, which is both faster and exact; otherwise it
// runs the graph search with the filter evaluated during the walk, which
// keeps going until it holds ef admitted records. Either way a selective
// filter does not cost recall, and a query returns min(K, admitted) hits
// before MinSimilarity applies.
func (c *Collection) Query(ctx context.Context, q Query) ([]Hit, error) {
	hits, _, err := c.QueryPlan(ctx, q)
	return hits, err
}

// QueryPlan is Query that also reports the plan it chose.
func (c *Collection) QueryPlan(ctx context.Context, q Query) ([]Hit, Plan, error) {
	done, err := c.enter()
	if err != nil {
		return nil, "", err
	}
	defer done()
	if err := c.checkVector(q.Vector); err != nil {
		return nil, "", fmt.Errorf("query: %w", err)
	}
	switch {
	case q.K < 0:
		return nil, "", fmt.Errorf("%w: k is %d", ErrBadQuery, q.K)
	case q.Ef < 0:
		return nil, "", fmt.Errorf("%w: ef is %d", ErrBadQuery, q.Ef)
	case q.MinSimilarity != nil && math.IsNaN(float64(*q.MinSimilarity)):
		return nil, "", fmt.Errorf("%w: minimum similarity is NaN", ErrBadQuery)
	}
	if q.K == 0 {
		q.K = 10
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	results, recs, onDisk, plan, err := c.search(q)
	if err != nil {
		return nil, "", err
	}
	if err := guard(func() error { return c.readMany(recs, onDisk, q.WithVectors) }); err != nil {
		return nil, "", err
	}
	hits := make([]Hit, 0, len(results))
	for i, r := range results {
		sim := Similarity(c.cfg.Metric, r.Distance)
		if q.MinSimilarity != nil && sim < *q.MinSimilarity {
			continue
		}
		if recs[i].ID == "" {
			continue // deleted since the search
		}
		hits = append(hits, Hit{Record: recs[i], Distance: r.Distance, Similarity: sim})
	}
	return hits, plan, nil
}

// readMany completes hits from Pebble through one iterator, seeking in ID
// order: the vectors when withVectors is set, and the contents not kept in
// memory (onDisk). A record deleted since the search comes back with an
// empty ID.
func (c *Collection) readMany(recs []Record, onDisk []bool, withVectors bool) error {
	var order []int
	for i := range recs {
		if withVectors || onDisk[i] {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return nil
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(recs[a].ID, recs[b].ID) })
	prefix := cidPrefix(tagRecord, c.id)
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return readError("read hits", err)
	}
	defer it.Close()
	for _, i := range order {
		key := recordKey(c.id, recs[i].ID)
		if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
			if err := it.Error(); err != nil {
				return readError("read hits", err)
			}
			recs[i].ID = ""
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return readError("read hits", err)
		}
		sr, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("%w: record %q of %q: %v", ErrCorrupt, recs[i].ID, c.name, err)
		}
		recs[i].Content = sr.content
		if withVectors {
			recs[i].Vector = sr.vector
		}
	}
	return nil
}

// exactLimit is the largest number of admitted records for which the exact
// plan is chosen in a collection of n. Scoring a records exactly costs about
// a*e; a filtered walk must pass over n/a nodes per admitted one, so it
// costs about w*n/a; they break even near sqrt(n*w/e). Measured on 100k x
// 128 at ef 64 (e = 0.6 us, w = 0.1 ms) that is about sqrt(166 n): exact
// was 65x faster at 922 admitted, the walk 6x faster at 10,000.
func exactLimit(n int) int { return max(256, int(math.Sqrt(200*float64(n)))) }

// search runs the index search under the collection lock and returns the
// results with their records as far as memory holds them (ID, a copy of the
// metadata, the content when it is kept in memory) and which contents are
// on disk.
func (c *Collection) search(q Query) ([]index.Result, []Record, []bool, Plan, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.ids)
	opts := &index.SearchOptions{Ef: q.Ef}
	plan := PlanGraph
	if !q.Filter.IsEmpty() {
		match := func(key uint64) bool { return q.Filter.Match(c.meta[key]) }
		opts.Filter = match
		plan = PlanFilteredGraph
		if keys, ok := c.admitted(q.Filter, exactLimit(n)); ok {
			opts.Keys, plan = keys, PlanExact
		}
	}
	if opts.Keys == nil && (q.Exact || q.Ef == 0 && exactPlan(n, c.cfg.Dimension)) {
		opts.Exact, plan = true, PlanExact // see plan.go
	}
	res, err := c.idx.Search(nil, q.Vector, q.K, opts)
	if err != nil {
		return nil, nil, nil, "", fmt.Errorf("engine: search: %w", err)
	}
	recs := make([]Record, len(res))
	onDisk := make([]bool, len(res))
	for i, r := range res {
		recs[i] = Record{ID: c.keys[r.Key], Metadata: cloneMeta(c.meta[r.Key])}
		content, cached := c.content[r.Key]
		recs[i].Content, onDisk[i] = content, !cached
	}
	return res, recs, onDisk, plan, nil
}

// admitted returns the keys f admits when there are at most limit of them
// and they can be found cheaply: from the postings, or, when a sample of
// the records suggests the filter is that selective, by evaluating it over
// every record. The caller holds c.mu.
func (c *Collection) admitted(f *Filter, limit int) ([]uint64, bool) {
	if cand, ok := c.post.candidates(f.root, limit); ok {
		return cand, true // Search dedupes and applies the full filter
	}
	const sample = 512
	if len(c.meta) > sample {
		seen, hit := 0, 0
		for _, m := range c.meta { // map order is a fair enough sample
			if f.Match(m) {
				hit++
			}
			if seen++; seen == sample {
				break
			}
		}
		if hit*len(c.meta) > 2*limit*sample {
			return nil, false
		}
	}
	var keys []uint64
	for k, m := range c.meta {
		if f.Match(m) {
			if keys = append(keys, k); len(keys) > limit {
				return nil, false
			}
		}
	}
	return keys, true
}
