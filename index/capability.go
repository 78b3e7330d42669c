package index

// Optional capabilities. An Index may implement any of these; callers
// find out with a type assertion (as database/sql/driver does), so a new
// backend needs only the Index methods.

// Compacter is an index that keeps deleted vectors as tombstones until
// Compact repairs the graph around them and frees their slots.
type Compacter interface {
	// Compact removes the tombstones present when it starts (nodes
	// deleted meanwhile wait for the next Compact) and returns how many it
	// removed.
	Compact() int
	// Deleted returns the number of tombstones.
	Deleted() int
}

// Checker is an index with an invariant checker.
type Checker interface {
	// Check verifies the index's structural invariants and returns the
	// first violation found.
	Check() error
}

var (
	_ Compacter = (*HNSW)(nil)
	_ Checker   = (*HNSW)(nil)
)
