package postgres

import (
	"math"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/analysis"
)

// The full-text index of a collection is three tables beside its records,
// kept current by every write in the write's own transaction:
//
//	mnemo_postings_<id>  (term, id, tf, len): one row per distinct term of
//	                     a record, with the record's length, keyed by
//	                     (term, id) so that a term's list is one index range
//	                     and a record's frequency of a term one probe
//	mnemo_terms_<id>     (term, shard, df, max_tf, min_len): document
//	                     frequencies, and the largest frequency and the
//	                     shortest length a term has been stored with,
//	                     which bound what it adds to any record's score
//	mnemo_textstats_<id> (shard, n, total): records with text, their length
//
// Frequencies and statistics are deltas summed over shards: a writer adds
// to the shard of its server process (pg_backend_pid() % textShards), so
// concurrent writers on different connections do not queue on one row.
// A record's terms are also in its row (terms, freqs, text_len), which
// tells a write what an update or delete takes out of the index.
const textShards = 16

func postingsTable(id int64) string {
	return pgx.Identifier{"mnemo_postings_" + strconv.FormatInt(id, 10)}.Sanitize()
}

func termsTable(id int64) string {
	return pgx.Identifier{"mnemo_terms_" + strconv.FormatInt(id, 10)}.Sanitize()
}

func statsTable(id int64) string {
	return pgx.Identifier{"mnemo_textstats_" + strconv.FormatInt(id, 10)}.Sanitize()
}

// createTextTables returns the statements that create collection id's
// full-text tables, empty.
func createTextTables(id int64) []string {
	return []string{
		`CREATE TABLE ` + postingsTable(id) + ` (
			term text COLLATE "C" NOT NULL,
			id text COLLATE "C" NOT NULL,
			tf int4 NOT NULL,
			len int4 NOT NULL,
			PRIMARY KEY (term, id) INCLUDE (tf, len)
		)`,
		`CREATE TABLE ` + termsTable(id) + ` (
			term text COLLATE "C" NOT NULL,
			shard int2 NOT NULL,
			df int8 NOT NULL,
			max_tf int4 NOT NULL,
			min_len int4 NOT NULL,
			PRIMARY KEY (term, shard) INCLUDE (df, max_tf, min_len)
		)`,
		`CREATE TABLE ` + statsTable(id) + ` (
			shard int2 PRIMARY KEY,
			n int8 NOT NULL,
			total int8 NOT NULL
		)`,
	}
}

// dropTextTables returns the statements that drop collection id's
// full-text tables.
func dropTextTables(id int64) []string {
	return []string{
		`DROP TABLE IF EXISTS ` + postingsTable(id),
		`DROP TABLE IF EXISTS ` + termsTable(id),
		`DROP TABLE IF EXISTS ` + statsTable(id),
	}
}

// buildTextTables returns the statements that create collection id's
// full-text tables and fill them from its records' terms (schema version
// 1 to 2), and drop the GIN index version 1 ranked text with.
func buildTextTables(id int64) []string {
	t, p := tableName(id), postingsTable(id)
	gin := pgx.Identifier{"mnemo_records_" + strconv.FormatInt(id, 10) + "_terms_idx"}.Sanitize()
	return append(createTextTables(id),
		`INSERT INTO `+p+` (term, id, tf, len)
			SELECT u.term, t.id, u.tf, t.text_len FROM `+t+` t CROSS JOIN LATERAL unnest(t.terms, t.freqs) AS u(term, tf)`,
		`INSERT INTO `+termsTable(id)+` (term, shard, df, max_tf, min_len) SELECT term, 0, count(*), max(tf), min(len) FROM `+p+` GROUP BY term`,
		`INSERT INTO `+statsTable(id)+` (shard, n, total)
			SELECT 0, count(*) FILTER (WHERE text_len > 0), coalesce(sum(text_len), 0) FROM `+t,
		`DROP INDEX IF EXISTS `+gin,
	)
}

// oldText is what a record stored before a write holds in the full-text
// index.
type oldText struct {
	terms  []string
	length int32
}

// termDelta is what a write changes in one term's frequencies: a count
// to add, and the largest frequency and shortest length it writes (0 and
// math.MaxInt32 when it writes none; the stored ones never go down).
type termDelta struct {
	df     int64
	maxTF  int32
	minLen int32
}

// textChange is what one write changes in a collection's full-text index:
// postings to delete and to write, document frequencies and statistics to
// add (negative to take away).
type textChange struct {
	delTerms, delIDs []string
	putTerms, putIDs []string
	putTF, putLen    []int32
	df               map[string]*termDelta
	n, total         int64
}

// remove takes what record id held out of the frequencies and
// statistics.
func (tc *textChange) remove(old oldText) {
	for _, term := range old.terms {
		d := tc.term(term)
		d.df--
	}
	if old.length > 0 {
		tc.n--
		tc.total -= int64(old.length)
	}
}

// newTextChange returns a change that changes nothing yet.
func newTextChange() *textChange {
	return &textChange{df: map[string]*termDelta{}}
}

// term returns the change of term, new ones zero.
func (tc *textChange) term(term string) *termDelta {
	d, ok := tc.df[term]
	if !ok {
		d = &termDelta{minLen: math.MaxInt32}
		tc.df[term] = d
	}
	return d
}

// drop takes record id, as stored, out of the index, postings and all.
func (tc *textChange) drop(id string, old oldText) {
	tc.remove(old)
	for _, term := range old.terms {
		tc.delTerms, tc.delIDs = append(tc.delTerms, term), append(tc.delIDs, id)
	}
}

// change replaces record id's old text (if it had some) with r's.
func (tc *textChange) change(r row, old *oldText) {
	if old != nil {
		tc.remove(*old)
		for _, term := range old.terms {
			if _, still := slices.BinarySearch(r.terms, term); !still {
				tc.delTerms, tc.delIDs = append(tc.delTerms, term), append(tc.delIDs, r.id)
			}
		}
	}
	for j, term := range r.terms {
		d := tc.term(term)
		d.df++
		d.maxTF, d.minLen = max(d.maxTF, r.freqs[j]), min(d.minLen, r.length)
		tc.putTerms, tc.putIDs = append(tc.putTerms, term), append(tc.putIDs, r.id)
		tc.putTF, tc.putLen = append(tc.putTF, r.freqs[j]), append(tc.putLen, r.length)
	}
	if r.length > 0 {
		tc.n++
		tc.total += int64(r.length)
	}
}

// queue adds the statements that apply the change to b. Frequencies are
// written in term order, so that two writers on one shard take their
// rows' locks in the same order and never deadlock.
func (tc *textChange) queue(b *pgx.Batch, id int64) {
	p := postingsTable(id)
	if len(tc.delTerms) > 0 {
		b.Queue(`DELETE FROM `+p+` p USING unnest($1::text[], $2::text[]) AS x(term, id)
			WHERE p.term = x.term AND p.id = x.id`, tc.delTerms, tc.delIDs)
	}
	if len(tc.putTerms) > 0 {
		b.Queue(`INSERT INTO `+p+` AS p (term, id, tf, len) SELECT * FROM unnest($1::text[], $2::text[], $3::int4[], $4::int4[])
			ON CONFLICT (term, id) DO UPDATE SET tf = EXCLUDED.tf, len = EXCLUDED.len
			WHERE (p.tf, p.len) IS DISTINCT FROM (EXCLUDED.tf, EXCLUDED.len)`, tc.putTerms, tc.putIDs, tc.putTF, tc.putLen)
	}
	terms := make([]string, 0, len(tc.df))
	for term, d := range tc.df {
		if d.df != 0 || d.maxTF > 0 {
			terms = append(terms, term)
		}
	}
	if len(terms) > 0 {
		slices.Sort(terms)
		dfs := make([]int64, len(terms))
		maxTF, minLen := make([]int32, len(terms)), make([]int32, len(terms))
		for i, term := range terms {
			d := tc.df[term]
			dfs[i], maxTF[i], minLen[i] = d.df, d.maxTF, d.minLen
		}
		b.Queue(`INSERT INTO `+termsTable(id)+` AS d (term, shard, df, max_tf, min_len)
			SELECT x.term, pg_backend_pid() % `+strconv.Itoa(textShards)+`, x.df, x.max_tf, x.min_len
			FROM unnest($1::text[], $2::int8[], $3::int4[], $4::int4[]) AS x(term, df, max_tf, min_len)
			ON CONFLICT (term, shard) DO UPDATE SET df = d.df + EXCLUDED.df,
				max_tf = greatest(d.max_tf, EXCLUDED.max_tf), min_len = least(d.min_len, EXCLUDED.min_len)`, terms, dfs, maxTF, minLen)
	}
	if tc.n != 0 || tc.total != 0 {
		b.Queue(`INSERT INTO `+statsTable(id)+` AS s (shard, n, total) VALUES (pg_backend_pid() % `+strconv.Itoa(textShards)+`, $1, $2)
			ON CONFLICT (shard) DO UPDATE SET n = s.n + EXCLUDED.n, total = s.total + EXCLUDED.total`, tc.n, tc.total)
	}
}

// lockIDs returns the statement that takes transaction-scoped advisory
// locks on the given record IDs of collection id, in one order (of their
// hashes) so that two writers never deadlock. Every write takes them
// before it reads what it replaces: two writes of one ID are serialised,
// so each sees the other's terms and the index counts a record once.
// The locks are of the two-key form (collection, hash of the ID), which
// never meets TryLock's one-key locks.
func lockIDs(id int64) string {
	return `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(int64(int32(id)), 10) + `, h)
		FROM (SELECT DISTINCT hashtext(x) AS h FROM unnest($1::text[]) AS x ORDER BY h) AS s`
}

// readOld reads what the records with the given IDs hold in the full-text
// index, from the next result of br.
func readOld(br pgx.BatchResults) (map[string]oldText, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	old := map[string]oldText{}
	var id string
	var o oldText
	_, err = pgx.ForEachRow(rows, []any{&id, &o.terms, &o.length}, func() error {
		old[id] = o
		return nil
	})
	return old, err
}

// queryTerms analyzes a text query: its distinct terms, sorted, and how
// often each occurs.
func queryTerms(text string) ([]string, []float64) {
	counts := analysis.Count(analysis.Terms(text))
	terms := make([]string, len(counts))
	qtf := make([]float64, len(counts))
	for i, tc := range counts {
		terms[i], qtf[i] = tc.Term, float64(tc.Count)
	}
	return terms, qtf
}

// textSQL ranks the records holding a term of q.Text by BM25, exactly as
// the engine's full-text index does (idf over every record holding the
// term, filter or not; lengths normalised by the average length of the
// records that have text), and selects the k best that the filter admits,
// best first, equal scores by ID, with the query's distance when qv is
// set.
//
// It prunes by MaxScore, in one statement. What a query term adds to a
// record's score is at most its bound: its weight idf*qtf*(k1+1) times
// tf/(tf + k1*(1-b+b*len/avg)) at the largest frequency and shortest
// length the term was ever stored with. First a threshold theta, at most
// the k-th best score: the rarest terms' postings (at least the rarest
// term's, up to seedPostings) give partial scores, the preScored*k best
// of those that the filter admits are scored in full, and theta is their
// k-th best. The terms whose bounds, summed from the weakest up, stay
// below theta (seed terms aside) are non-essential: a record holding only
// those cannot reach the top k, so their lists, the long ones of common
// terms, are not read. The essential terms' lists give the candidates and
// their partial scores (the seeds' reused); the preScored*k best are
// scored in full, which raises theta; then every candidate whose partial
// score plus the non-essential bounds reaches theta looks the strongest
// non-essential term up by (term, id), one index probe, and those that
// can still reach theta then look up the others. Every comparison with
// theta allows for the rounding of sums taken in another order
// (boundSlack). The result is exact.
func (c *Collection) textSQL(q mnemo.Query, qv *pgvector.Vector, k int) (string, []any) {
	terms, qtf := queryTerms(q.Text)
	p := *c.cfg.Text.BM25
	if q.BM25 != nil {
		p = *q.BM25
	}
	var b sqlBuilder
	tp, qp, k1, bp := b.arg(terms), b.arg(qtf), b.arg(p.K1), b.arg(p.B)
	post := postingsTable(c.id)
	// The contribution of posting x to a record's score, as the engine
	// computes it: w * tf / (tf + k1a + k1b*len).
	contrib := func(w, x string) string {
		return w + " * " + x + ".tf::float8 / (" + x + ".tf::float8 + nm.k1a + nm.k1b * " + x + ".len::float8)"
	}
	// admitted keeps the rows x (id, score) that the filter admits: a join
	// with the records and the filter's condition, its values bound once
	// and named wherever the statement filters; nothing without a filter.
	admitted := ""
	if !q.Filter.IsEmpty() {
		fb := sqlBuilder{args: b.args}
		filterSQL(&fb, "t.metadata", q.Filter)
		admitted = ` JOIN ` + c.table + ` t ON t.id = x.id WHERE ` + fb.String()
		b.args = fb.args
	}
	// kth writes the k-th best score of the rows of cte (id, score) that
	// the filter admits, or 0 when fewer are.
	kp := b.arg(int64(k))
	kth := func(cte string) {
		b.write(`coalesce((SELECT x.score FROM `, cte, ` x`)
		b.write(admitted)
		b.write(` ORDER BY x.score DESC OFFSET `, kp, ` - 1 LIMIT 1), 0)`)
	}
	// lookup is what the non-essential terms add to the score of
	// candidate x: one index probe per term.
	lookupWhere := func(cond string) string {
		return `coalesce((SELECT sum(` + contrib("ne.wt", "p") + `)
		FROM ne CROSS JOIN LATERAL (SELECT p.tf, p.len FROM ` + post + ` p WHERE p.term = ne.term AND p.id = x.id LIMIT 1) p` + cond + `), 0)`
	}
	lookup := lookupWhere("")
	// The strongest non-essential term first, the others only for the
	// candidates it leaves able to reach theta.
	lookup1, lookup2 := lookupWhere(" WHERE ne.r = 1"), lookupWhere(" WHERE ne.r > 1")
	b.write(`WITH st AS MATERIALIZED (
	SELECT coalesce(sum(n), 0)::float8 AS n, coalesce(sum(total), 0)::float8 AS total FROM `, statsTable(c.id), `),
nm AS MATERIALIZED (
	SELECT `, k1, `::float8 * (1 - `, bp, `::float8) AS k1a, `, k1, `::float8 * `, bp, `::float8 / (st.total / nullif(st.n, 0)) AS k1b FROM st),
w AS MATERIALIZED (
	SELECT q.term, d.df, ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) * q.qtf * (`, k1, `::float8 + 1) AS wt, d.max_tf, d.min_len
	FROM unnest(`, tp, `::text[], `, qp, `::float8[]) AS q(term, qtf) CROSS JOIN st
	CROSS JOIN LATERAL (SELECT sum(x.df)::float8 AS df, max(x.max_tf)::float8 AS max_tf, min(x.min_len)::float8 AS min_len
		FROM `, termsTable(c.id), ` x WHERE x.term = q.term) d
	WHERE d.df > 0),
b AS MATERIALIZED (
	SELECT term, wt, bound, upto, cum = df OR cum <= `, b.arg(int64(seedPostings)), ` AS seed
	FROM (SELECT term, wt, df, bound,
		sum(bound) OVER (ORDER BY bound, term ROWS UNBOUNDED PRECEDING) AS upto,
		sum(df) OVER (ORDER BY df, term ROWS UNBOUNDED PRECEDING) AS cum
	FROM (SELECT w.*, w.wt * w.max_tf / (w.max_tf + nm.k1a + nm.k1b * w.min_len) AS bound FROM w, nm) AS w) AS w),
seed AS MATERIALIZED (
	SELECT p.id, sum(`, contrib("b.wt", "p"), `) AS score
	FROM b CROSS JOIN nm JOIN `, post, ` p ON p.term = b.term
	WHERE b.seed
	GROUP BY p.id),
sfull AS MATERIALIZED (
	SELECT x.id, x.score + coalesce((SELECT sum(`, contrib("b.wt", "p"), `)
		FROM b CROSS JOIN LATERAL (SELECT p.tf, p.len FROM `, post, ` p WHERE p.term = b.term AND p.id = x.id LIMIT 1) p
		WHERE NOT b.seed), 0) AS score
	FROM (SELECT x.* FROM seed x`)
	b.write(admitted)
	b.write(` ORDER BY x.score DESC LIMIT `, b.arg(int64(preScored*k)), `) x, nm),
th AS MATERIALIZED (SELECT `)
	kth("sfull")
	b.write(` AS theta),
ess AS MATERIALIZED (
	SELECT b.term, b.wt, b.seed FROM b, th WHERE b.seed OR b.upto * `, boundSlack, ` >= th.theta),
ne AS MATERIALIZED (
	SELECT b.term, b.wt, b.bound, row_number() OVER (ORDER BY b.bound DESC, b.term) AS r
	FROM b, th WHERE NOT b.seed AND b.upto * `, boundSlack, ` < th.theta),
rest AS MATERIALIZED (
	SELECT coalesce(sum(ne.bound), 0) AS bound, coalesce(sum(ne.bound) FILTER (WHERE ne.r > 1), 0) AS bound2 FROM ne),
part AS MATERIALIZED (
	SELECT s.id, s.score FROM seed s WHERE NOT EXISTS (SELECT FROM ess WHERE NOT ess.seed)
	UNION ALL
	SELECT x.id, sum(x.score) AS score FROM (
		SELECT s.id, s.score FROM seed s
		UNION ALL
		SELECT p.id, `, contrib("e.wt", "p"), `
		FROM ess e CROSS JOIN nm JOIN `, post, ` p ON p.term = e.term WHERE NOT e.seed) AS x
	WHERE EXISTS (SELECT FROM ess WHERE NOT ess.seed)
	GROUP BY x.id),
pre AS MATERIALIZED (
	SELECT x.id, x.score + `, lookup, ` AS score
	FROM (SELECT x.* FROM part x`)
	b.write(admitted)
	b.write(` ORDER BY x.score DESC LIMIT `, b.arg(int64(preScored*k)), `) x, nm),
th2 AS MATERIALIZED (SELECT greatest(th.theta, `)
	kth("pre")
	b.write(`) AS theta FROM th),
c1 AS MATERIALIZED (
	SELECT x.id, x.score + `, lookup1, ` AS score
	FROM part x, rest, th2, nm
	WHERE (x.score + rest.bound) * `, boundSlack, ` >= th2.theta),
cand AS (
	SELECT x.id, x.score + `, lookup2, ` AS score
	FROM c1 x, rest, th2, nm
	WHERE (x.score + rest.bound2) * `, boundSlack, ` >= th2.theta),
top AS (
	SELECT x.id, x.score FROM cand x`)
	b.write(admitted)
	dist := ""
	if qv != nil {
		dist = c.distanceSQL(b.arg(qv))
	}
	b.write(` ORDER BY x.score DESC, x.id LIMIT `, kp, `)
SELECT `, c.columns(q, dist), `, top.score FROM top JOIN `, c.table, ` t ON t.id = top.id ORDER BY top.score DESC, top.id`)
	return b.String(), b.args
}

// preScored is how many candidates per result a text query scores in
// full, best partial scores first, to raise its pruning threshold before
// it looks the others up.
const preScored = 4

// seedPostings bounds the postings of the rarest query terms that a text
// query reads first to find its pruning threshold (beyond the rarest
// term's own, always read).
const seedPostings = 256

// boundSlack widens the pruning bounds by more than the rounding of a sum
// of a few float64s, so that no record is pruned whose score, summed in
// another order, could reach the threshold.
const boundSlack = "1.000000001::float8"
