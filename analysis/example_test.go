package analysis_test

import (
	"fmt"

	"github.com/mnemodb/mnemo/analysis"
)

// ExampleTerms shows the terms both the full-text index and the offline
// embedder see: lower-cased English stems, stop words dropped, and
// character bigrams for a script written without spaces.
func ExampleTerms() {
	fmt.Println(analysis.Terms("What is Paul working on? He works at Google."))
	fmt.Println(analysis.Terms("Don't run; O'Brien runs in 東京都"))
	// Output:
	// [paul work work googl]
	// [don't run o'brien run 東京 京都]
}

// ExampleCount counts the distinct terms of a text, sorted by term.
func ExampleCount() {
	for _, tc := range analysis.Count(analysis.Terms("the runner runs, and runs again")) {
		fmt.Println(tc.Term, tc.Count)
	}
	// Output:
	// run 2
	// runner 1
}
