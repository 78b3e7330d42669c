package postgres

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
)

// maxEfSearch is the largest hnsw.ef_search pgvector takes.
const maxEfSearch = 1000

// efKey keys a connection's hnsw.ef_search in its CustomData, when known.
const efKey = "mnemo.ef_search"

// Query answers a vector, text or hybrid query with the engine's
// semantics (see engine.Collection.Query and the package doc): the same
// checks, the same scores and ranks, hybrid fusion by mnemo.FuseScores
// and mnemo.SortHits. Each side orders equal scores by record ID.
//
// A vector query runs the HNSW index for K+1 records with hnsw.ef_search
// set to max(Ef or the collection's EfSearch, K+1) (at most 1000) and
// pgvector's iterative scan in strict order; when the K-th and the next
// tie, the records at that distance are read again exactly (see
// settleTies). With a filter, when the index returns fewer than K hits,
// it is run again as an exact scan. Exact forces an exact scan. A text
// query ranks the records holding a query term by BM25 over the
// collection's postings and statistics, pruned as the engine prunes (see
// textSQL). A hybrid query runs both sides for mnemo.FusionDepth
// candidates each, the two sides at once on two connections.
// hnsw.ef_search is set in the vector side's round trip, only when the
// connection's differs.
func (c *Collection) Query(ctx context.Context, q mnemo.Query) ([]mnemo.Hit, error) {
	t := telemetry.Start(c.s.rec)
	var mode mnemo.Mode
	var plan string
	hits, err := c.query(ctx, q, &mode, &plan)
	if t.On() {
		t.Done(metrics.Event{Op: metrics.OpQuery, Collection: c.name, Mode: string(mode), Plan: plan, Records: len(hits), Err: err})
	}
	return hits, err
}

// query is Query; it sets *gotMode to the query's mode and *plan to how it
// was answered, for metrics: "text" for a text query, else the vector
// side's: "exact" (Query.Exact, a flat collection, or the exact retry
// of a filtered search that came back short), "filtered-graph" (the
// HNSW index under a filter) or "graph".
func (c *Collection) query(ctx context.Context, q mnemo.Query, gotMode *mnemo.Mode, plan *string) ([]mnemo.Hit, error) {
	if err := c.s.enter(ctx); err != nil {
		return nil, err
	}
	q, mode, err := mnemo.CheckQuery(c.name, c.cfg, q)
	if err != nil {
		return nil, err
	}
	*gotMode = mode
	switch {
	case mode == mnemo.ModeText:
		*plan = "text"
	case q.Exact || c.cfg.Index == mnemo.Flat:
		*plan = "exact"
	case !q.Filter.IsEmpty():
		*plan = "filtered-graph"
	default:
		*plan = "graph"
	}
	k := q.K
	switch {
	case mode == mnemo.ModeHybrid:
		k = mnemo.FusionDepth(q.Fusion, q.K)
	case mode == mnemo.ModeText && q.Spread != nil:
		k = max(k, mnemo.SpreadDepth)
	}
	var vec, txt []mnemo.Hit
	err = c.s.do(ctx, func(ctx context.Context) error {
		var err error
		vec, txt, err = c.sides(ctx, q, mode, k, q.Exact)
		if err != nil {
			return err
		}
		if mode != mnemo.ModeText && !q.Exact && !q.Filter.IsEmpty() && len(vec) < k {
			vec, _, err = c.sides(ctx, q, mnemo.ModeVector, k, true)
			*plan = "exact"
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var hits []mnemo.Hit
	switch mode {
	case mnemo.ModeVector:
		hits = vec
	case mnemo.ModeText:
		hits = txt
	case mnemo.ModeHybrid:
		hits = merge(vec, txt)
		mnemo.FuseScores(hits, q.Fusion)
	}
	if q.Spread != nil {
		if hits, err = c.spread(ctx, q, hits); err != nil {
			return nil, err
		}
	}
	// MinSimilarity drops hits before K cuts the ranking, as the engine
	// does: a text query with Spread ranks SpreadDepth candidates and
	// their neighbours, and returns the best K that are similar enough.
	if q.MinSimilarity != nil {
		hits = slices.DeleteFunc(hits, func(h mnemo.Hit) bool { return h.Similarity < *q.MinSimilarity })
	}
	if mode == mnemo.ModeHybrid || q.Spread != nil {
		mnemo.SortHits(hits)
		hits = hits[:min(len(hits), q.K)]
	}
	return hits, nil
}

// merge joins the two sides of a hybrid query by ID: one hit per record,
// with each side's rank and score.
func merge(vec, txt []mnemo.Hit) []mnemo.Hit {
	hits := slices.Clone(vec)
	at := make(map[string]int, len(vec)+len(txt))
	for i, h := range hits {
		at[h.Record.ID] = i
	}
	for _, h := range txt {
		if i, ok := at[h.Record.ID]; ok {
			hits[i].TextRank, hits[i].TextScore = h.TextRank, h.TextScore
			continue
		}
		h.Score = 0
		hits = append(hits, h)
	}
	return hits
}

// sides runs the vector side (mode vector or hybrid) and the text side
// (mode text or hybrid) of q for k candidates each. A hybrid query runs
// them at once, on two connections (the server runs a connection's
// statements one after the other): each is one round trip, the vector
// side two when its k-th place is a tie (see settleTies).
func (c *Collection) sides(ctx context.Context, q mnemo.Query, mode mnemo.Mode, k int, exact bool) (vec, txt []mnemo.Hit, err error) {
	var qv *pgvector.Vector
	if q.Vector != nil {
		v := pgvector.NewVector(q.Vector)
		qv = &v
	}
	switch mode {
	case mnemo.ModeVector:
		vec, err = c.vectorSide(ctx, q, qv, k, exact)
	case mnemo.ModeText:
		txt, err = c.textSide(ctx, q, qv, k)
	default:
		var terr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			txt, terr = c.textSide(ctx, q, qv, k)
		}()
		vec, err = c.vectorSide(ctx, q, qv, k, exact)
		<-done
		err = cmp.Or(err, terr)
	}
	if err != nil {
		return nil, nil, err
	}
	return vec, txt, nil
}

// textSide runs the text side of q for k candidates (see textSQL), ranked
// from 1.
func (c *Collection) textSide(ctx context.Context, q mnemo.Query, qv *pgvector.Vector, k int) ([]mnemo.Hit, error) {
	sql, args := c.textSQL(q, qv, k)
	if err := checkParams(args); err != nil {
		return nil, err
	}
	rows, err := c.s.reader().Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	txt, err := c.collectRows(rows)
	if err != nil {
		return nil, err
	}
	for i := range txt {
		txt[i].TextRank, txt[i].TextScore = i+1, txt[i].Score
	}
	return txt, nil
}

// vectorSide runs the vector side of q for k candidates (see vectorSQL
// and settleTies), setting hnsw.ef_search in the same round trip when
// the connection's differs.
func (c *Collection) vectorSide(ctx context.Context, q mnemo.Query, qv *pgvector.Vector, k int, exact bool) ([]mnemo.Hit, error) {
	sql, args := c.vectorSQL(q, qv, k, exact)
	if err := checkParams(args); err != nil {
		return nil, err
	}
	conn, err := c.s.reader().Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	ef := q.Ef
	if ef == 0 {
		ef = c.cfg.EfSearch
	}
	ef = min(max(ef, k+1, 1), maxEfSearch)
	var b pgx.Batch
	setEf := conn.Conn().PgConn().CustomData()[efKey] != ef
	if setEf {
		b.Queue(`SELECT set_config('hnsw.ef_search', $1, false)`, strconv.Itoa(ef))
	}
	b.Queue(sql, args...)
	br := conn.SendBatch(ctx, &b)
	defer br.Close()
	if setEf {
		// The batch is one implicit transaction: the setting holds once
		// the whole of it commits.
		delete(conn.Conn().PgConn().CustomData(), efKey)
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	vec, err := c.collectHits(br)
	if err != nil {
		return nil, err
	}
	if err := br.Close(); err != nil {
		return nil, err
	}
	if setEf {
		conn.Conn().PgConn().CustomData()[efKey] = ef
	}
	return c.settleTies(ctx, conn, q, qv, vec, k)
}

// settleTies makes the vector side's candidates the k nearest, records
// at equal distances ordered by ID, so that when more records tie than
// there is room for, the smallest IDs are kept. Distances are compared as
// the hits carry them, in float32, as the engine computes them: pgvector's
// float8 distances of two records at the same float32 distance are not
// a tie to SQL. hits are the rows of vectorSQL. An index scan returns up
// to k+1 rows and an arbitrary part of a tie; when rows k and k+1 tie,
// the rows at that distance are read again (see tiedByIndex and tied)
// for the places left. The hits come back nearest first and ranked from
// 1, with their similarity as their score.
func (c *Collection) settleTies(ctx context.Context, conn *pgxpool.Conn, q mnemo.Query, qv *pgvector.Vector, hits []mnemo.Hit, k int) ([]mnemo.Hit, error) {
	hits = slices.Clone(hits)
	sortNearest(hits)
	var sorted []mnemo.Hit
	if len(hits) > k && hits[k].Distance == hits[k-1].Distance {
		d := hits[k-1].Distance
		for _, h := range hits {
			if h.Distance < d {
				sorted = append(sorted, h)
			}
		}
		tied, err := c.tiedByIndex(ctx, conn, q, qv, d, k-len(sorted), k+tieReach)
		if err == nil && tied == nil {
			tied, err = c.tied(ctx, conn, q, qv, d, k-len(sorted))
		}
		if err != nil {
			return nil, err
		}
		sorted = append(sorted, tied...)
	} else {
		sorted = hits[:min(len(hits), k)]
	}
	for i := range sorted {
		sorted[i].Score, sorted[i].VectorRank = float64(sorted[i].Similarity), i+1
	}
	return sorted, nil
}

// sortNearest orders hits by distance, equal distances by ID.
func sortNearest(hits []mnemo.Hit) {
	slices.SortStableFunc(hits, func(a, b mnemo.Hit) int {
		if d := cmp.Compare(a.Distance, b.Distance); d != 0 {
			return d
		}
		return strings.Compare(a.Record.ID, b.Record.ID)
	})
}

// tieReach is how many records past K a tie at the K-th place is looked
// for in the index before an exact scan.
const tieReach = 64

// tiedByIndex returns up to n records that q's filter admits at distance
// d from q's vector, smallest IDs first, from the index's nearest limit:
// when the index ran out of records, or found one farther than d, it
// found every record at d that its search reaches (the float32 rounding
// of pgvector's distances keeps their order). It returns nil when the
// index holds more records at d than limit.
func (c *Collection) tiedByIndex(ctx context.Context, conn *pgxpool.Conn, q mnemo.Query, qv *pgvector.Vector, d float32, n, limit int) ([]mnemo.Hit, error) {
	sql, args := c.vectorSQL(q, qv, limit-1, false)
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	hits, err := c.collectRows(rows)
	if err != nil {
		return nil, err
	}
	sortNearest(hits)
	if len(hits) == limit && hits[len(hits)-1].Distance <= d {
		return nil, nil
	}
	var tied []mnemo.Hit
	for _, h := range hits {
		if h.Distance == d {
			tied = append(tied, h)
		}
	}
	return tied[:min(n, len(tied))], nil
}

// tied returns up to n records that q's filter admits at distance d from
// q's vector, smallest IDs first: an exact scan.
func (c *Collection) tied(ctx context.Context, conn *pgxpool.Conn, q mnemo.Query, qv *pgvector.Vector, d float32, n int) ([]mnemo.Hit, error) {
	var b sqlBuilder
	dist := c.distanceSQL(b.arg(qv))
	b.write("SELECT ", c.columns(q, dist), ", NULL::float8 FROM ", c.table, " t WHERE ", c.distance32(dist), " = ", b.arg(d), "::float4 AND ")
	filterSQL(&b, "t.metadata", q.Filter)
	b.write(" ORDER BY t.id LIMIT ", b.arg(int64(n)))
	if err := checkParams(b.args); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, b.String(), b.args...)
	if err != nil {
		return nil, err
	}
	hits, err := c.collectRows(rows)
	return hits, err
}

// distance32 is the distance SQL dist computes, as a hit carries it:
// squared for L2 (pgvector gives its root), rounded to float4.
func (c *Collection) distance32(dist string) string {
	if c.cfg.Metric == mnemo.L2 {
		return "(" + dist + " * " + dist + ")::float4"
	}
	return "(" + dist + ")::float4"
}

// distanceSQL is the distance of the metric to the parameter p: pgvector's
// L2 operator gives the root of the engine's squared distance, which
// scanHit squares.
func (c *Collection) distanceSQL(p string) string {
	switch c.cfg.Metric {
	case mnemo.Dot:
		return "(t.embedding <#> " + p + ")"
	case mnemo.L2:
		return "(t.embedding <-> " + p + ")"
	}
	return "(t.embedding <=> " + p + ")"
}

// columns are the selected columns of a hit: id, content, metadata,
// embedding (or NULL), distance (or NULL), score.
func (c *Collection) columns(q mnemo.Query, dist string) string {
	emb := "NULL::vector"
	if q.WithVectors {
		emb = "t.embedding"
	}
	if dist == "" {
		dist = "NULL::float8"
	}
	return "t.id, t.content, t.metadata, " + emb + ", " + dist + "::float8"
}

// vectorSQL selects the k records nearest to qv, by pgvector's HNSW index
// (k+1 of them: see settleTies) or, when exact or the collection has no
// index, by an exact scan ordered by distance and ID.
func (c *Collection) vectorSQL(q mnemo.Query, qv *pgvector.Vector, k int, exact bool) (string, []any) {
	var b sqlBuilder
	p := b.arg(qv)
	dist := c.distanceSQL(p)
	// ORDER BY the distance alone is what pgvector's index answers; an
	// expression of it (or a second key) is an exact scan and sort.
	order, limit := dist, k+1
	if exact || c.cfg.Index == mnemo.Flat {
		order, limit = c.distance32(dist)+", t.id", k
	}
	b.write("SELECT ", c.columns(q, dist), ", NULL::float8 FROM ", c.table, " t WHERE ")
	filterSQL(&b, "t.metadata", q.Filter)
	b.write(" ORDER BY ", order, " LIMIT ", b.arg(int64(limit)))
	return b.String(), b.args
}

// collectHits reads the next result of a batch (see collectRows).
func (c *Collection) collectHits(br pgx.BatchResults) ([]mnemo.Hit, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return c.collectRows(rows)
}

// collectRows reads rows of columns and a score into hits, in the rows'
// order (see scanHit).
func (c *Collection) collectRows(rows pgx.Rows) ([]mnemo.Hit, error) {
	return pgx.CollectRows(rows, c.scanHit)
}

// scanHit reads a row of columns and a score (NULL: 0) into a hit. The
// distance SQL computed (NULL: none) becomes the hit's Distance, squared
// for L2 (pgvector gives its root), and its Similarity.
func (c *Collection) scanHit(r pgx.CollectableRow) (mnemo.Hit, error) {
	var h mnemo.Hit
	var vec *pgvector.Vector
	var meta []byte
	var dist, score *float64
	if err := r.Scan(&h.Record.ID, &h.Record.Content, &meta, &vec, &dist, &score); err != nil {
		return h, err
	}
	if vec != nil {
		h.Record.Vector = vec.Slice()
	}
	var err error
	if h.Record.Metadata, err = decodeMetadata(h.Record.ID, meta); err != nil {
		return h, err
	}
	if dist != nil {
		d := *dist
		if c.cfg.Metric == mnemo.L2 {
			d *= d
		}
		h.Distance = float32(d)
		h.Similarity = mnemo.Similarity(c.cfg.Metric, h.Distance)
	}
	if score != nil {
		h.Score = *score
	}
	return h, nil
}
