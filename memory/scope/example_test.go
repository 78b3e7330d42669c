package scope_test

import (
	"fmt"

	"github.com/mnemodb/mnemo/memory/scope"
)

// Example shows what a scope stores with an item and the filter a scoped
// handle reads with; the adapters take it as their Scope option.
func Example() {
	s := scope.Of("user", "alice", "session", "2026-12-04")
	if err := s.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(s)
	fmt.Println(s.Metadata()["mnemo.scope.user"])
	fmt.Println(scope.FromMetadata(s.Metadata()).With("agent", "planner"))
	// Output:
	// session=2026-12-04,user=alice
	// alice
	// agent=planner,session=2026-12-04,user=alice
}
