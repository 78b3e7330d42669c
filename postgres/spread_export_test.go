package postgres

import "github.com/mnemodb/mnemo"

// SpreadSQL returns the statement, and its arguments, with which c reads
// the neighbours of hits (a query's candidates, with their metadata) for
// q's Spread: for EXPLAIN in the benchmarks. An empty statement means no
// hit has a place.
func SpreadSQL(c mnemo.Collection, q mnemo.Query, hits []mnemo.Hit) (string, []any, error) {
	pc := c.(*Collection)
	q, _, err := mnemo.CheckQuery(pc.name, pc.cfg, q)
	if err != nil {
		return "", nil, err
	}
	groups, positions, _, err := spreadSources(q.Spread, hits)
	if err != nil || len(positions) == 0 {
		return "", nil, err
	}
	sql, args := pc.neighboursSQL(q, groups, positions)
	return sql, args, nil
}
