package store_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/memory/store"
)

// Example_aimuSemanticDocstring runs the original's docstring example
// (SemanticMemoryStore) with the defaults: the offline embedder, 10
// results, no cutoff. "work" finds the work fact first, by its word and by
// its embedding. "family life" shares no word with any fact: the original's
// neural embedder ranks the marriage and sibling facts first by meaning,
// the offline embedder cannot, so every fact comes back (all three are
// within the 10 results the original also returns) in no meaningful
// order; use an embedder that knows meaning (embed.OpenAI, embed.Ollama)
// for topic queries.
func Example_aimuSemanticDocstring() {
	ctx := context.Background()
	s, err := store.OpenSemantic("", nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	s.Store(ctx, "Paul works at Google")
	s.Store(ctx, "Paul is married to Sarah")
	s.Store(ctx, "Sarah is the sister of Emma")
	work, _ := s.Search(ctx, "work", 0)
	fmt.Println(work[0])
	family, _ := s.Search(ctx, "family life", 0)
	fmt.Println(len(family))
	// The original's max_distance "typical useful range" (0.3 to 0.6) is
	// a neural embedder's: with the offline one, a cutoff drops facts
	// that share no word with the query.
	tight, _ := s.SearchWithin(ctx, "work", 10, 0.6)
	fmt.Println(tight)
	// Output:
	// Paul works at Google
	// 3
	// [Paul works at Google]
}
