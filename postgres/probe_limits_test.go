package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
)

// TestProbeWideFilterText: a filter of 7000 conditions (well inside
// mnemo.MaxFilterValues) answers a vector query, and must answer a text
// query too; textSQL writes the filter five times, each condition with its
// own parameters, which passes PostgreSQL's 65535 parameters of one
// statement.
func TestProbeWideFilterText(t *testing.T) {
	serverDSN(t)
	p := newProbePair(t, "wide", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
	var recs []mnemo.Record
	for i := range 50 {
		recs = append(recs, mnemo.Record{ID: fmt.Sprintf("r%02d", i), Vector: []float32{1, float32(i)}, Content: fmt.Sprintf("hello world w%d", i%5),
			Metadata: map[string]any{fmt.Sprintf("f%d", i): 1.0}})
	}
	p.upsert(t, recs...)
	var conds []string
	for i := range 7000 {
		conds = append(conds, fmt.Sprintf(`{"f%d": 1}`, i))
	}
	f, err := mnemo.ParseFilter(`{"$or": [` + strings.Join(conds, ",") + `]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []mnemo.Query{
		{Mode: mnemo.ModeVector, Vector: []float32{1, 3}, K: 5, Filter: f},
		{Mode: mnemo.ModeText, Text: "hello w3", K: 5, Filter: f},
		{Mode: mnemo.ModeHybrid, Text: "hello w3", Vector: []float32{1, 3}, K: 5, Filter: f},
	} {
		start := time.Now()
		got, err := p.pg.Query(context.Background(), q)
		t.Logf("%s: %d hits, %v, in %v", q.Mode, len(got), err, time.Since(start))
		if err != nil {
			t.Errorf("%s query with a filter of 7000 conditions: %v", q.Mode, err)
			continue
		}
		p.compare(t, string(q.Mode), q)
	}
}
