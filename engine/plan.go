package engine

// The exact plan for small collections.
//
// A graph search costs about the same whatever the collection's size, but
// reaching a given recall takes a larger ef on data without structure: on
// 20,000 random unit vectors of 384 dimensions, HNSW (M 16,
// efConstruction 200) needed an ef far above the default for high recall,
// and there took longer than an exact scan of all 20,000 (recall 1;
// figures in docs/performance-notes.md). An exact scan costs n*(d+c) for n vectors of
// dimension d (c: the fixed cost of a row). Below exactScanBudget a
// collection therefore answers every query that does not ask for an ef by
// scanning: exact, and on data like the above faster than the graph at
// that recall. Above it the graph answers, at the collection's EfSearch;
// a query's Ef chooses the graph at any size, trading recall for speed.

// exactScanBudget is the largest n*(d+exactRowCost) answered by an exact
// scan: 20,000 x 384, the size measured above (docs/performance-notes.md).
// A variable so that tests can exercise both sides of the rule with small
// collections.
var exactScanBudget = 20000 * (384 + exactRowCost)

// exactRowCost is the fixed cost of scoring a row in the row kernels (the
// gather, the heap offer and the reduction), in units of one dimension.
const exactRowCost = 16

// exactPlan reports whether a query that names no ef, over a collection of
// n vectors of dimension dim, is answered by an exact scan.
func exactPlan(n, dim int) bool {
	return n <= exactScanBudget/(dim+exactRowCost)
}
