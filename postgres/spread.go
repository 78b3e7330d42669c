package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/mnemodb/mnemo"
	"github.com/pgvector/pgvector-go"
)

// The metadata fields in which the memory adapters keep a record's
// conversation and its place in the collection's order. A collection's
// table has an index over them and one over the position alone
// (spreadIndexes), which the neighbours' statement uses when a query
// spreads over these fields.
const (
	reservedGroup    = "mnemo.group"
	reservedPosition = "mnemo.pos"
)

// spread applies q.Spread to scored hits as every backend does (see
// mnemo.Spread): a candidate at integer position p of group g
// (mnemo.Spread.Place) adds Weight times its score to its neighbours,
// the first Window records below p (position descending, then ID) and
// the first Window above it (position ascending, then ID) among the
// records of group g with a place that the filter admits; records at p
// itself are not neighbours. Neighbours the query had not found join the
// hits, after them and in ID order. The neighbours of every candidate
// are read in one statement (neighboursSQL).
func (c *Collection) spread(ctx context.Context, q mnemo.Query, hits []mnemo.Hit) ([]mnemo.Hit, error) {
	nb := q.Spread
	groups, positions, scores, err := spreadSources(nb, hits)
	if err != nil {
		return nil, err
	}
	if len(positions) == 0 {
		return hits, nil
	}
	sql, args := c.neighboursSQL(q, groups, positions)
	type neighbour struct {
		hit    mnemo.Hit
		source int // the candidate's index in positions, from 0
	}
	var rows []neighbour
	err = c.s.do(ctx, func(ctx context.Context) error {
		r, err := c.s.reader().Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		rows = rows[:0]
		for r.Next() {
			var n int64
			h, err := c.scanHit(&ordinalRow{r, &n})
			if err != nil {
				r.Close()
				return err
			}
			rows = append(rows, neighbour{h, int(n) - 1})
		}
		return r.Err()
	})
	if err != nil {
		return nil, err
	}
	// Each neighbour's shares add up in the candidates' order, whatever
	// order the plan returned them in.
	slices.SortStableFunc(rows, func(a, b neighbour) int { return a.source - b.source })
	found := len(hits)
	at := make(map[string]int, len(hits)+len(rows))
	for i, h := range hits {
		at[h.Record.ID] = i
	}
	for _, r := range rows {
		j, seen := at[r.hit.Record.ID]
		if !seen {
			j = len(hits)
			at[r.hit.Record.ID] = j
			r.hit.Score = 0
			hits = append(hits, r.hit)
		}
		hits[j].Score += nb.Weight * scores[r.source]
	}
	slices.SortFunc(hits[found:], func(a, b mnemo.Hit) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	return hits, nil
}

// spreadSources returns the place and score of each hit that has a place
// under nb: its group as JSON (when nb has a Group), its position, its
// score.
func spreadSources(nb *mnemo.Spread, hits []mnemo.Hit) (groups []string, positions, scores []float64, err error) {
	for _, h := range hits {
		g, p, ok := nb.Place(h.Record.Metadata)
		if !ok {
			continue
		}
		if nb.Group != "" {
			js, err := json.Marshal(g)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("postgres: spread: group %v: %w", g, err)
			}
			groups = append(groups, string(js))
		}
		positions = append(positions, p)
		scores = append(scores, h.Score)
	}
	return groups, positions, scores, nil
}

// neighboursSQL returns the statement that reads the neighbours of every
// candidate (the i-th at positions[i], of group groups[i] when q.Spread
// has a Group): one row per candidate and neighbour, a record that is
// the neighbour of several candidates once for each, with the
// candidate's ordinal (from 1) before the columns of a hit. The
// candidates are unnested WITH ORDINALITY; for each, two ordered LIMIT
// Window subqueries read the records below and above it, the filter
// applied inside them. A group is compared as jsonb (numbers by value,
// never equal to a string or a boolean, as filters compare them); IDs
// order byte-wise (COLLATE "C", Go's string order). Over the reserved
// fields the subqueries are range scans of spreadIndexes.
func (c *Collection) neighboursSQL(q mnemo.Query, groups []string, positions []float64) (string, []any) {
	nb := q.Spread
	w := int64(max(nb.Window, 1))
	var b sqlBuilder
	dist, emb := "", "NULL::vector"
	if q.Vector != nil {
		dist = c.distanceSQL(b.arg(pgvector.NewVector(q.Vector)))
	}
	if dist != "" || q.WithVectors {
		emb = "t.embedding"
	}
	var gkey, pkey string
	if nb.Position == reservedPosition && (nb.Group == reservedGroup || groups == nil) {
		// Constants of this package, written as literals so that the
		// planner matches spreadIndexes' expressions.
		gkey, pkey = "'"+reservedGroup+"'", "'"+reservedPosition+"'"
	} else {
		pkey = b.arg(nb.Position) + "::text"
		if groups != nil {
			gkey = b.arg(nb.Group) + "::text"
		}
	}
	pos := positionSQL("t.metadata", pkey)
	b.write("SELECT c.n, ", c.columns(q, dist), ", NULL::float8 FROM ")
	if groups != nil {
		b.write("unnest(", b.arg(groups), "::jsonb[], ", b.arg(positions), "::float8[]) WITH ORDINALITY c(g, p, n)")
	} else {
		b.write("unnest(", b.arg(positions), "::float8[]) WITH ORDINALITY c(p, n)")
	}
	lim := b.arg(w)
	var where string // the conditions both sides share
	for i, side := range []struct{ cmp, order string }{{"<", "DESC"}, {">", "ASC"}} {
		if i == 0 {
			b.write(" CROSS JOIN LATERAL ((")
		} else {
			b.write(") UNION ALL (")
		}
		b.write("SELECT t.id, t.content, t.metadata, ", emb, " AS embedding FROM ", c.table, " t WHERE ")
		if i == 0 {
			start := len(b.String())
			if groups != nil {
				b.write("t.metadata -> ", gkey, " = c.g AND ")
			}
			filterSQL(&b, "t.metadata", q.Filter)
			where = b.String()[start:]
		} else {
			b.write(where)
		}
		b.write(" AND ", pos, " ", side.cmp, " c.p ORDER BY ", pos, " ", side.order, `, t.id COLLATE "C" LIMIT `, lim)
	}
	b.write(")) t")
	return b.String(), b.args
}

// positionSQL is the position the jsonb column col holds at key (SQL
// text): an integer-valued number as float8, as Go reads it; NULL for
// anything else. A number under 1 in size is an integer only when Go
// rounds it to zero (at most 2^-1075 in size, half the smallest
// subnormal), which float8 would refuse as an underflow: such a number
// is 0 here, any other NULL. Its WHENs are tried in order, so it never
// fails on what a record can hold, and an index may be built over it.
// Being NULL for what has no place, it needs no other condition beside
// it, which would hide from the planner how many rows the index holds.
func positionSQL(col, key string) string {
	v, f := col+" -> "+key, "("+col+" ->> "+key+")::float8"
	return "(CASE WHEN jsonb_typeof(" + v + ") IS DISTINCT FROM 'number' THEN NULL" +
		" WHEN abs((" + v + ")::numeric) >= 1 THEN CASE WHEN " + f + " = trunc(" + f + ") THEN " + f + " END" +
		" WHEN abs((" + v + ")::numeric) * " + twoTo1075 + " <= 1 THEN 0::float8 END)"
}

// twoTo1075 is 2^1075 in decimal: a number times it is at most 1 when
// float64 rounds the number to zero.
var twoTo1075 = new(big.Int).Lsh(big.NewInt(1), 1075).String()

// spreadIndexes returns the statements that index collection id's table
// by the reserved group and position, and by the reserved position alone
// (a Spread without a Group), for neighboursSQL: mnemo_records_<id>_spread
// and mnemo_records_<id>_spread_pos, each created when it does not exist.
// Their expressions never fail on a record's metadata, so building them
// over an existing table, and every write after, succeed as they did
// without them.
func spreadIndexes(id int64) []string {
	prefix := "mnemo_records_" + strconv.FormatInt(id, 10) + "_spread"
	pos := positionSQL("metadata", "'"+reservedPosition+"'")
	return []string{
		"CREATE INDEX IF NOT EXISTS " + pgx.Identifier{prefix}.Sanitize() + " ON " + tableName(id) +
			" ((metadata -> '" + reservedGroup + "'), " + pos + ")",
		"CREATE INDEX IF NOT EXISTS " + pgx.Identifier{prefix + "_pos"}.Sanitize() + " ON " + tableName(id) + " (" + pos + ")",
	}
}

// ordinalRow scans a row's first column into n and the rest as a hit's
// (see scanHit).
type ordinalRow struct {
	pgx.Rows
	n *int64
}

func (r *ordinalRow) Scan(dest ...any) error {
	return r.Rows.Scan(append([]any{r.n}, dest...)...)
}
