package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
)

// probeTextCTE runs q's text statement with its final SELECT replaced by
// sel (over its CTEs), for a look inside.
func probeTextCTE(t *testing.T, c mnemo.Collection, q mnemo.Query, sel string) [][]any {
	t.Helper()
	pc := c.(*Collection)
	q, _, err := mnemo.CheckQuery(pc.name, pc.cfg, q)
	if err != nil {
		t.Fatal(err)
	}
	sql, args := pc.textSQL(q, nil, q.K)
	i := strings.LastIndex(sql, "\nSELECT ")
	sql = sql[:i] + "\n" + sel
	rows, err := pc.s.pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ProbeTextCTE is probeTextCTE for the external tests.
var ProbeTextCTE = probeTextCTE
