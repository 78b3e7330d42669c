package engine

import (
	"github.com/mnemodb/mnemo"
	"runtime"

	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo/analysis"
	"github.com/mnemodb/mnemo/engine/internal/bm25"
	"github.com/mnemodb/mnemo/index"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
)

// Plan names how a query was answered (see Collection.Query).
type Plan string

// Plans.
const (
	PlanGraph         Plan = "graph"          // index search, no filter
	PlanFilteredGraph Plan = "filtered-graph" // index search, filter evaluated during the walk
	PlanExact         Plan = "exact"          // exact scan over the admitted records
	PlanText          Plan = "text"           // BM25 over the full-text index
)

// Query returns up to K records best matching q, best first.
//
// A vector query returns the records nearest to q.Vector. A query that
// sets no Ef on a small collection (see Query.Ef) scans every admitted
// record: exact, and at that size as fast as the graph. With a filter,
// the engine chooses a plan: when the records the filter admits are few
// (found through its in-memory index of metadata values, or by
// evaluating the filter over a sample and then over every record), it
// scores exactly those, which is both faster and exact; otherwise it runs
// the graph search with the filter evaluated during the walk, which keeps
// going until it holds ef admitted records. Either way a selective filter
// does not cost recall, and a query returns min(K, admitted) hits before
// MinSimilarity applies.
//
// A text query scores every record holding a query term by BM25 (exact,
// filter applied). A hybrid query runs both sides, each for
// Fusion.Depth candidates under the same filter, and fuses them.
func (c *Collection) Query(ctx context.Context, q mnemo.Query) ([]mnemo.Hit, error) {
	hits, _, err := c.QueryPlan(ctx, q)
	return hits, err
}

// QueryPlan is Query that also reports the plan it chose (for a hybrid
// query, the vector side's; the text side is always exact).
func (c *Collection) QueryPlan(ctx context.Context, q mnemo.Query) ([]mnemo.Hit, Plan, error) {
	t := telemetry.Start(c.db.rec)
	hits, mode, plan, err := c.query(ctx, q)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpQuery, Collection: c.Name(), Mode: string(mode), Plan: string(plan), Records: len(hits), Err: err})
	}
	return hits, plan, err
}

// query is QueryPlan; it also returns the query's mode.
func (c *Collection) query(ctx context.Context, q mnemo.Query) ([]mnemo.Hit, mnemo.Mode, Plan, error) {
	done, err := c.enter()
	if err != nil {
		return nil, "", "", err
	}
	defer done()
	mode, err := c.checkQuery(&q)
	if err != nil {
		return nil, "", "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, mode, "", err
	}
	hits, recs, onDisk, plan, err := c.run(q, mode)
	if err != nil {
		return nil, mode, "", err
	}
	if err := guard(func() error { return c.readMany(recs, onDisk, q.WithVectors) }); err != nil {
		return nil, mode, plan, err
	}
	out := hits[:0]
	for i := range hits {
		if recs[i].ID == "" {
			continue // deleted since the search
		}
		hits[i].Record = recs[i]
		out = append(out, hits[i])
	}
	return out, mode, plan, nil
}

// checkQuery validates q, applies its defaults and resolves its mode.
func (c *Collection) checkQuery(q *mnemo.Query) (mnemo.Mode, error) {
	checked, mode, err := mnemo.CheckQuery(c.Name(), c.cfg, *q)
	if err != nil {
		return "", err
	}
	*q = checked
	return mode, nil
}

// run answers a checked query under the collection lock: the hits with
// their records as far as memory holds them (ID, a copy of the metadata,
// the content when it is kept in memory) and which contents are on disk.
func (c *Collection) run(q mnemo.Query, mode mnemo.Mode) ([]mnemo.Hit, []mnemo.Record, []bool, Plan, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var hits []mnemo.Hit
	var plan Plan
	q.Filter = c.reduceFilter(q.Filter)
	cand := c.candidates(q.Filter) // once, for both sides of a hybrid query
	switch mode {
	case mnemo.ModeVector:
		res, p, err := c.search(q, cand)
		if err != nil {
			return nil, nil, nil, "", err
		}
		plan = p
		hits = make([]mnemo.Hit, len(res))
		for i, r := range res {
			sim := mnemo.Similarity(c.cfg.Metric, r.Distance)
			hits[i] = mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}, Distance: r.Distance, Similarity: sim, Score: float64(sim), VectorRank: i + 1}
		}
		if q.MinSimilarity != nil { // text and hybrid apply it in finish
			hits = slices.DeleteFunc(hits, func(h mnemo.Hit) bool { return h.Similarity < *q.MinSimilarity })
		}
	case mnemo.ModeText:
		plan = PlanText
		k := q.K
		if q.Spread != nil {
			k = max(k, mnemo.SpreadDepth)
		}
		res := c.searchText(q, k, cand)
		hits = make([]mnemo.Hit, len(res))
		keys := make([]uint64, len(res))
		for i, r := range res {
			hits[i] = mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}, Score: r.Score, TextRank: i + 1, TextScore: r.Score}
			keys[i] = r.Key
		}
		if q.Spread != nil {
			hits = c.spread(q, hits, keys, cand)
		}
		var err error
		if hits, err = c.finish(q, hits); err != nil {
			return nil, nil, nil, "", err
		}
	case mnemo.ModeHybrid:
		var err error
		if hits, plan, err = c.hybrid(q, cand); err != nil {
			return nil, nil, nil, "", err
		}
	}
	recs := make([]mnemo.Record, len(hits))
	onDisk := make([]bool, len(hits))
	for i, h := range hits {
		key := c.ids[h.Record.ID]
		recs[i] = mnemo.Record{ID: h.Record.ID, Metadata: cloneMeta(c.meta[key])}
		content, cached := c.content[key]
		recs[i].Content, onDisk[i] = content, !cached
	}
	return hits, recs, onDisk, plan, nil
}

// admittedKeys is what a query's filter admits when it is selective
// enough to list (see admitted): found once per query, for both sides.
type admittedKeys struct {
	keys []uint64 // a superset of the admitted keys; nil with ok: none
	ok   bool     // the filter is that selective (false without one)
}

// reduceFilter returns f without the conditions the field index knows
// hold for every record (see fieldIndex.holds); nil when none is left,
// which spares the query evaluating it on each record it reads. The
// caller holds c.mu.
func (c *Collection) reduceFilter(f *mnemo.Filter) *mnemo.Filter {
	if f.IsEmpty() {
		return nil
	}
	total := len(c.ids)
	return f.Reduce(func(n mnemo.FilterNode) bool { return c.fields.holds(n, total) })
}

// candidates finds what f admits when that is at most exactLimit keys.
// The caller holds c.mu.
func (c *Collection) candidates(f *mnemo.Filter) admittedKeys {
	if f.IsEmpty() {
		return admittedKeys{}
	}
	keys, ok := c.admitted(f, exactLimit(len(c.ids)))
	return admittedKeys{keys, ok}
}

// searchText runs the text side for k candidates, equal scores ordered
// by ID; a selective filter's candidates (cand) are scored alone. The
// caller holds c.mu.
func (c *Collection) searchText(q mnemo.Query, k int, cand admittedKeys) []bm25.Result {
	p := *c.cfg.Text.BM25
	if q.BM25 != nil {
		p = *q.BM25
	}
	var admit func(uint64) bool
	if !q.Filter.IsEmpty() {
		admit = func(key uint64) bool { return q.Filter.Match(c.meta[key]) }
	}
	keys := cand.keys
	if cand.ok && keys == nil {
		return nil // the filter admits nothing
	}
	// As searchTies: the full-text index orders a tie by key, and returns
	// every result tied with the k-th, to be ordered by ID here.
	terms := analysis.Terms(q.Text)
	var res []bm25.Result
	if keys != nil {
		res = c.text.SearchKeysTies(terms, k, p, keys, admit)
	} else {
		res = c.text.SearchTies(terms, k, p, admit)
	}
	slices.SortStableFunc(res, func(a, b bm25.Result) int {
		if d := cmp.Compare(b.Score, a.Score); d != 0 {
			return d
		}
		return strings.Compare(c.keys[a.Key], c.keys[b.Key])
	})
	return res[:min(len(res), k)]
}

// fillDistances sets Distance and Similarity of hits that lack them (found
// by the text side only) by scoring their stored vectors. The caller holds
// c.mu.
func (c *Collection) fillDistances(vec []float32, hits []mnemo.Hit) error {
	var keys []uint64
	for _, h := range hits {
		if h.VectorRank == 0 {
			keys = append(keys, c.ids[h.Record.ID])
		}
	}
	if len(keys) == 0 {
		return nil
	}
	res, err := c.idx.Search(nil, vec, len(keys), &index.SearchOptions{Keys: keys})
	if err != nil {
		return fmt.Errorf("engine: search: %w", err)
	}
	dist := make(map[uint64]float32, len(res))
	for _, r := range res {
		dist[r.Key] = r.Distance
	}
	for i := range hits {
		if hits[i].VectorRank == 0 {
			d := dist[c.ids[hits[i].Record.ID]]
			hits[i].Distance, hits[i].Similarity = d, mnemo.Similarity(c.cfg.Metric, d)
		}
	}
	return nil
}

// textInLine runs every text side in line: BenchmarkHybridCost sets it
// for one kind of query, to compare the two ways in one run.
var textInLine = false

// textSide starts the text side of a hybrid query and returns what
// waits for its results: on a goroutine of its own when the process may
// run two (GOMAXPROCS above 1), so that a query's latency is nearer the
// slower side's than the sum of both; in line otherwise. A panic on the
// goroutine is raised again by the wait. The caller holds c.mu until it
// has waited.
func (c *Collection) textSide(q mnemo.Query, depth int, cand admittedKeys) func() []bm25.Result {
	if textInLine || runtime.GOMAXPROCS(0) < 2 {
		res := c.searchText(q, depth, cand)
		return func() []bm25.Result { return res }
	}
	var res []bm25.Result
	var failed any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { failed = recover() }()
		res = c.searchText(q, depth, cand)
	}()
	return func() []bm25.Result {
		<-done
		if failed != nil {
			panic(failed)
		}
		return res
	}
}

// hybrid runs both sides, the text side beside the vector side (see
// textSide), and fuses them. The caller holds c.mu.
func (c *Collection) hybrid(q mnemo.Query, cand admittedKeys) ([]mnemo.Hit, Plan, error) {
	depth := mnemo.FusionDepth(q.Fusion, q.K)
	vq := q
	vq.K = depth
	tres := c.textSide(q, depth, cand)
	vres, plan, err := c.search(vq, cand)
	text := tres()
	if err != nil {
		return nil, "", err
	}
	byKey := make(map[uint64]int, len(vres)+len(text))
	hits := make([]mnemo.Hit, 0, len(vres)+len(text))
	keys := make([]uint64, 0, len(vres)+len(text))
	for i, r := range vres {
		sim := mnemo.Similarity(c.cfg.Metric, r.Distance)
		byKey[r.Key] = len(hits)
		hits = append(hits, mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}, Distance: r.Distance, Similarity: sim, VectorRank: i + 1})
		keys = append(keys, r.Key)
	}
	for i, r := range text {
		j, ok := byKey[r.Key]
		if !ok {
			j = len(hits)
			byKey[r.Key] = j
			hits = append(hits, mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}})
			keys = append(keys, r.Key)
		}
		hits[j].TextRank, hits[j].TextScore = i+1, r.Score
	}
	mnemo.FuseScores(hits, q.Fusion)
	if q.Spread != nil {
		hits = c.spread(q, hits, keys, cand)
	}
	hits, err = c.finish(q, hits)
	return hits, plan, err
}

// finish ranks scored hits and returns the best K. The distances of
// the hits that lack them (found by the text side or as neighbours) are
// filled on the way, for the best hits only, a window at a time, and
// hits under MinSimilarity are dropped. The caller holds c.mu.
func (c *Collection) finish(q mnemo.Query, hits []mnemo.Hit) ([]mnemo.Hit, error) {
	mnemo.SortHits(hits)
	if q.Vector == nil {
		return hits[:min(len(hits), q.K)], nil
	}
	out := hits[:0] // written behind the reading position
	for lo := 0; lo < len(hits) && len(out) < q.K; {
		hi := min(len(hits), lo+2*(q.K-len(out)))
		if err := c.fillDistances(q.Vector, hits[lo:hi]); err != nil {
			return nil, err
		}
		for _, h := range hits[lo:hi] {
			if q.MinSimilarity != nil && h.Similarity < *q.MinSimilarity {
				continue
			}
			if len(out) < q.K {
				out = append(out, h)
			}
		}
		lo = hi
	}
	return out, nil
}

// readMany completes hits from Pebble through one iterator, seeking in ID
// order: the vectors when withVectors is set, and the contents not kept in
// memory (onDisk). A record deleted since the search comes back with an
// empty ID.
func (c *Collection) readMany(recs []mnemo.Record, onDisk []bool, withVectors bool) error {
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
			return fmt.Errorf("%w: record %q of %q: %v", ErrCorrupt, recs[i].ID, c.Name(), err)
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
// costs about w*n/a; they break even near sqrt(n*w/e). sqrt(200 n) is
// that point with w/e as measured on 100k x 128 at ef 64, rounded up
// (docs/performance-notes.md).
func exactLimit(n int) int { return max(256, int(math.Sqrt(200*float64(n)))) }

// search runs the index search, over a selective filter's candidates
// (cand) when it has them. The caller holds c.mu.
func (c *Collection) search(q mnemo.Query, cand admittedKeys) ([]index.Result, Plan, error) {
	n := len(c.ids)
	opts := &index.SearchOptions{Ef: q.Ef}
	plan := PlanGraph
	if !q.Filter.IsEmpty() {
		match := func(key uint64) bool { return q.Filter.Match(c.meta[key]) }
		opts.Filter = match
		plan = PlanFilteredGraph
		if cand.ok {
			opts.Keys, plan = cand.keys, PlanExact
		}
	}
	if opts.Keys == nil && (q.Exact || q.Ef == 0 && exactPlan(n, c.cfg.Dimension)) {
		opts.Exact, plan = true, PlanExact // see plan.go
	}
	res, err := c.searchTies(q.Vector, q.K, opts)
	if err != nil {
		return nil, "", fmt.Errorf("engine: search: %w", err)
	}
	return res, plan, nil
}

// searchTies returns the k nearest records by the index, records at equal
// distances ordered by ID: the index orders a tie by key and, when its
// k-th place is a tie, keeps an arbitrary part of it. It asks the index
// for k+1, and for twice as many while the last result still ties with
// the k-th. The caller holds c.mu.
func (c *Collection) searchTies(vec []float32, k int, opts *index.SearchOptions) ([]index.Result, error) {
	for n := k + 1; ; n *= 2 {
		res, err := c.idx.Search(nil, vec, n, opts)
		if err != nil {
			return nil, err
		}
		if len(res) < n || res[n-1].Distance != res[k-1].Distance {
			slices.SortStableFunc(res, func(a, b index.Result) int {
				if d := cmp.Compare(a.Distance, b.Distance); d != 0 {
					return d
				}
				return strings.Compare(c.keys[a.Key], c.keys[b.Key])
			})
			return res[:min(len(res), k)], nil
		}
	}
}

// admitted returns the keys f admits when there are at most limit of them
// and they can be found cheaply: from the field index, or, when a sample of
// the records suggests the filter is that selective, by evaluating it over
// every record. The caller holds c.mu.
func (c *Collection) admitted(f *mnemo.Filter, limit int) ([]uint64, bool) {
	if tree, ok := f.Tree(); ok {
		if cand, ok := c.fields.candidates(tree, limit); ok {
			return cand, true // Search dedupes and applies the full filter
		}
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
