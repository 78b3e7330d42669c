package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
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
	for _, q := range wideFilterQueries(t, 7000, "hello w3") {
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

// TestProbeHugeKAndTerms: K = mnemo.MaxQueryK and a query of 5000 distinct
// terms, against the engine.
func TestProbeHugeKAndTerms(t *testing.T) {
	serverDSN(t)
	p := newProbePair(t, "huge", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
	var recs []mnemo.Record
	for i := range 400 {
		recs = append(recs, mnemo.Record{ID: fmt.Sprintf("r%03d", i), Vector: []float32{1, float32(i % 9)}, Content: fmt.Sprintf("w%d w%d w%d common", i, i%37, i%101),
			Metadata: map[string]any{"pos": float64(i), "g": float64(i % 4)}})
	}
	p.upsert(t, recs...)
	var ws []string
	for i := range 5000 {
		ws = append(ws, fmt.Sprintf("w%d", i))
	}
	f, _ := mnemo.ParseFilter(`{"g": 2}`)
	for _, q := range []mnemo.Query{
		{Mode: mnemo.ModeText, Text: "common w5", K: mnemo.MaxQueryK},
		{Mode: mnemo.ModeText, Text: strings.Join(ws, " "), K: 7},
		{Mode: mnemo.ModeText, Text: strings.Join(ws, " "), K: 1000, Filter: f},
		{Mode: mnemo.ModeHybrid, Text: strings.Join(ws[:300], " ") + " common", Vector: []float32{1, 1}, K: mnemo.MaxQueryK},
		{Mode: mnemo.ModeText, Text: "w3 w40 common", K: 3, Spread: &mnemo.Spread{Position: "pos", Weight: 1, Window: 3}},
	} {
		start := time.Now()
		p.compare(t, fmt.Sprintf("%s k %d terms %d", q.Mode, q.K, len(strings.Fields(q.Text))), q)
		t.Logf("%s k %d: %v", q.Mode, q.K, time.Since(start))
	}
}

// TestFilterPastParameterLimit: a filter with more values than one
// PostgreSQL statement takes parameters is refused at once, in every
// mode, as mnemo.ErrBadFilter wrapping postgres.ErrUnsupported, not
// retried as a failed send and reported as ErrUnavailable.
func TestFilterPastParameterLimit(t *testing.T) {
	serverDSN(t)
	pg := openFresh(t)
	defer pg.Close()
	ctx := context.Background()
	c, err := pg.CreateCollection(ctx, "wide", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.Flat})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 2}, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range wideFilterQueries(t, 40000, "hello") {
		start := time.Now()
		_, err := c.Query(ctx, q)
		if !errors.Is(err, mnemo.ErrBadFilter) || !errors.Is(err, postgres.ErrUnsupported) {
			t.Errorf("%s query with a filter of 40000 conditions: %v, want ErrBadFilter wrapping ErrUnsupported", q.Mode, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s query took %v to fail: retried?", q.Mode, d)
		}
	}
}

// wideFilterQueries returns a vector, a text and a hybrid query (k 5, the
// text given) filtered by {"$or": [{"f0": 1}, ... {"f<n-1>": 1}]}.
func wideFilterQueries(t *testing.T, n int, text string) []mnemo.Query {
	t.Helper()
	conds := make([]string, n)
	for i := range conds {
		conds[i] = fmt.Sprintf(`{"f%d": 1}`, i)
	}
	f, err := mnemo.ParseFilter(`{"$or": [` + strings.Join(conds, ",") + `]}`)
	if err != nil {
		t.Fatal(err)
	}
	return []mnemo.Query{
		{Mode: mnemo.ModeVector, Vector: []float32{1, 3}, K: 5, Filter: f},
		{Mode: mnemo.ModeText, Text: text, K: 5, Filter: f},
		{Mode: mnemo.ModeHybrid, Text: text, Vector: []float32{1, 3}, K: 5, Filter: f},
	}
}
