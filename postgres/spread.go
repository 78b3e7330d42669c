package postgres

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/pgvector/pgvector-go"
)

// spread applies q.Spread to scored hits as every backend does: a
// candidate at integer position p of group g (mnemo.Spread.Place) adds
// Weight times its score to the records of group g at positions
// p-Window..p+Window (other than p) that the filter admits, which join
// the hits, after them and in ID order, when they were not among them.
// The adjacent records are read in one query (positions and group texts
// narrow it; the exact group comparison is made here).
func (c *Collection) spread(ctx context.Context, q mnemo.Query, hits []mnemo.Hit) ([]mnemo.Hit, error) {
	nb := q.Spread
	w := max(nb.Window, 1)
	type source struct {
		group any
		pos   float64
		score float64
	}
	var sources []source
	posSet := map[float64]bool{}
	groupSet := map[string]bool{}
	textGroups := true // every group a string or boolean: ->> narrows by them
	for _, h := range hits {
		g, p, ok := nb.Place(h.Record.Metadata)
		if !ok {
			continue
		}
		if nb.Group != "" {
			if t, ok := textOf(g); ok {
				groupSet[t] = true
			} else {
				textGroups = false
			}
		}
		sources = append(sources, source{g, p, h.Score})
		for d := -w; d <= w; d++ {
			if d != 0 {
				posSet[p+float64(d)] = true
			}
		}
	}
	if len(sources) == 0 {
		return hits, nil
	}
	positions := make([]float64, 0, len(posSet))
	for p := range posSet {
		positions = append(positions, p)
	}
	groups := make([]string, 0, len(groupSet))
	for g := range groupSet {
		groups = append(groups, g)
	}
	var qv *pgvector.Vector
	if q.Vector != nil {
		v := pgvector.NewVector(q.Vector)
		qv = &v
	}
	var b sqlBuilder
	dist := ""
	if qv != nil {
		dist = c.distanceSQL(b.arg(qv))
	}
	pos := b.arg(nb.Position) + "::text"
	b.write("SELECT ", c.columns(q, dist), ", NULL::float8 FROM ", c.table, " t WHERE jsonb_typeof(t.metadata -> ", pos,
		") = 'number' AND (t.metadata ->> ", pos, ")::float8 = ANY(", b.arg(positions), "::float8[])")
	if nb.Group != "" && textGroups {
		b.write(" AND (t.metadata ->> ", b.arg(nb.Group), "::text) = ANY(", b.arg(groups), "::text[])")
	}
	b.write(" AND ")
	filterSQL(&b, "t.metadata", q.Filter)
	if err := checkParams(b.args); err != nil {
		return nil, err
	}
	var rows []mnemo.Hit
	err := c.s.do(ctx, func(ctx context.Context) error {
		r, err := c.s.reader().Query(ctx, b.String(), b.args...)
		if err != nil {
			return err
		}
		rows, err = c.collectRows(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	found := len(hits)
	at := make(map[string]int, len(hits)+len(rows))
	for i, h := range hits {
		at[h.Record.ID] = i
	}
	for _, r := range rows {
		g, p, ok := nb.Place(r.Record.Metadata)
		if !ok {
			continue
		}
		for _, s := range sources {
			if d := math.Abs(p - s.pos); d == 0 || d > float64(w) || g != s.group {
				continue
			}
			j, seen := at[r.Record.ID]
			if !seen {
				j = len(hits)
				at[r.Record.ID] = j
				hits = append(hits, r)
			}
			hits[j].Score += nb.Weight * s.score
		}
	}
	slices.SortFunc(hits[found:], func(a, b mnemo.Hit) int { return strings.Compare(a.Record.ID, b.Record.ID) })
	return hits, nil
}

// textOf is what ->> gives for a string or boolean jsonb value; false
// for a number, whose text PostgreSQL writes its own way.
func textOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}
