package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestExactPlanRule(t *testing.T) {
	tests := []struct {
		n, dim int
		want   bool
	}{
		{0, 384, true},
		{20000, 384, true},
		{20001, 384, false},
		{1000, 65536, false},
		{100000, 64, true},
		{1000000, 128, false},
	}
	for _, tt := range tests {
		if got := exactPlan(tt.n, tt.dim); got != tt.want {
			t.Errorf("exactPlan(%d, %d) = %v, want %v", tt.n, tt.dim, got, tt.want)
		}
	}
}

// randomUnit returns n random unit vectors of dimension dim: data without
// structure, on which a graph needs a large ef for good recall.
func randomUnit(r *rand.Rand, n, dim int) [][]float32 {
	vs := make([][]float32, n)
	for i := range vs {
		v := make([]float32, dim)
		var s float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			s += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(s))
		}
		vs[i] = v
	}
	return vs
}

// defaultRecall loads vecs into a collection at default settings and
// returns its recall@10 over queries (against a brute-force answer), the
// plans the queries took and the collection.
func defaultRecall(t testing.TB, vecs, queries [][]float32) (float64, map[Plan]int, *Collection) {
	db := mustOpen(t, "", &Options{InMemory: true, NoSync: true})
	t.Cleanup(func() { db.Close() })
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: len(vecs[0])})
	for lo := 0; lo < len(vecs); lo += 1000 {
		var batch []mnemo.Record
		for i := lo; i < min(len(vecs), lo+1000); i++ {
			batch = append(batch, mnemo.Record{ID: fmt.Sprint(i), Vector: vecs[i]})
		}
		if _, err := c.Upsert(ctx, batch...); err != nil {
			t.Fatal(err)
		}
	}
	plans := map[Plan]int{}
	var sum float64
	for _, q := range queries {
		hits, plan, err := c.QueryPlan(ctx, mnemo.Query{Vector: q, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		plans[plan]++
		sum += overlap(hits, bruteForce(vecs, q, 10))
	}
	return sum / float64(len(queries)), plans, c
}

// bruteForce returns the ids of the k vectors nearest to q by cosine.
func bruteForce(vecs [][]float32, q []float32, k int) []string {
	type hit struct {
		id  int
		dot float64
	}
	hits := make([]hit, len(vecs))
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		hits[i] = hit{i, d}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.dot > b.dot {
			return -1
		}
		if a.dot < b.dot {
			return 1
		}
		return 0
	})
	ids := make([]string, k)
	for i := range ids {
		ids[i] = fmt.Sprint(hits[i].id)
	}
	return ids
}

func overlap(hits []mnemo.Hit, want []string) float64 {
	n := 0
	for _, h := range hits {
		if slices.Contains(want, h.Record.ID) {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// TestDefaultsAreSafe loads random unit 384-d vectors, the data on which a
// graph at its default ef does worst, through the engine at default
// settings. Under the exact-scan budget the queries are answered exactly;
// with the budget lowered below the collection's size they take the graph.
// (The full-size figure, 20,000 vectors, is BenchmarkDefaultRecall.)
func TestDefaultsAreSafe(t *testing.T) {
	skipUnderRace(t, "measures recall on 2,000 vectors")
	r := rand.New(rand.NewPCG(384, 1))
	vecs, queries := randomUnit(r, 2000, 384), randomUnit(r, 20, 384)
	rec, plans, _ := defaultRecall(t, vecs, queries)
	if rec < 0.95 || plans[PlanExact] != len(queries) {
		t.Fatalf("recall@10 %.3f with plans %v; want >= 0.95, every query exact", rec, plans)
	}
	defer func(b int) { exactScanBudget = b }(exactScanBudget)
	exactScanBudget = 1000 * (384 + exactRowCost)
	if _, plans, _ := defaultRecall(t, vecs, queries); plans[PlanGraph] != len(queries) {
		t.Fatalf("above the budget: plans %v, want every query on the graph", plans)
	}
}

// TestQueryEfChoosesTheGraph: a query that asks for an ef walks the graph
// even on a small collection; Exact still forces a scan.
func TestQueryEfChoosesTheGraph(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: vec(1, 0)}, mnemo.Record{ID: "b", Vector: vec(0, 1)}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q    mnemo.Query
		want Plan
	}{
		{mnemo.Query{Vector: vec(1, 1), K: 1}, PlanExact},
		{mnemo.Query{Vector: vec(1, 1), K: 1, Ef: 10}, PlanGraph},
		{mnemo.Query{Vector: vec(1, 1), K: 1, Ef: 10, Exact: true}, PlanExact},
	} {
		hits, plan, err := c.QueryPlan(ctx, tt.q)
		if err != nil || plan != tt.want || len(hits) != 1 {
			t.Errorf("%+v: plan %s, %d hits, %v; want plan %s, 1 hit", tt.q, plan, len(hits), err, tt.want)
		}
	}
}

// BenchmarkDefaultRecall reports recall@10 and queries/s of 20,000 random
// unit 384-d vectors through the engine at default settings.
func BenchmarkDefaultRecall(b *testing.B) {
	r := rand.New(rand.NewPCG(384, 2))
	vecs, queries := randomUnit(r, 20000, 384), randomUnit(r, 100, 384)
	rec, plans, c := defaultRecall(b, vecs, queries)
	b.Logf("plans %v", plans)
	i := 0
	for b.Loop() {
		if _, err := c.Query(ctx, mnemo.Query{Vector: queries[i%len(queries)], K: 10}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(rec, "recall@10")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}

// TestQuantizedCollection: a collection created with Quantize "sq8"
// persists it, answers its graph queries through the codes (and exactly at
// an ef covering it), survives a reopen from its checkpoint, and a bad
// quantization is refused.
func TestQuantizedCollection(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "q", mnemo.CollectionConfig{Dimension: 24, Quantize: "SQ8"})
	r := rand.New(rand.NewPCG(24, 1))
	vecs := randomUnit(r, 300, 24)
	var batch []mnemo.Record
	for i, v := range vecs {
		batch = append(batch, mnemo.Record{ID: fmt.Sprint(i), Vector: v})
	}
	if _, err := c.Upsert(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	check := func(c *Collection) {
		t.Helper()
		if got := c.Config().Quantize; got != "sq8" {
			t.Fatalf("Config().Quantize = %q, want sq8", got)
		}
		for _, q := range vecs[:20] {
			hits, plan, err := c.QueryPlan(ctx, mnemo.Query{Vector: q, K: 10, Ef: 400})
			if err != nil || plan != PlanGraph {
				t.Fatalf("plan %s, %v", plan, err)
			}
			if rec := overlap(hits, bruteForce(vecs, q, 10)); rec != 1 {
				t.Fatalf("recall@10 %.2f at ef >= n, want 1", rec)
			}
		}
	}
	check(c)
	db.Close()
	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, err := db.Collection("q")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Stats(ctx); err != nil || st.OpenedBy != "checkpoint+replay" {
		t.Fatalf("opened by %q (%v), want from the checkpoint", st.OpenedBy, err)
	}
	check(c)
	for _, bad := range []mnemo.CollectionConfig{{Dimension: 4, Quantize: "pq"}, {Dimension: 4, Index: mnemo.Flat, Quantize: "sq8"}} {
		if _, err := db.CreateCollection(ctx, "bad", bad); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("%+v: err %v, want ErrInvalidConfig", bad, err)
		}
	}
}
