package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
)

// Import notes that have no vectors into a collection made with the
// offline hashing embedder, then query them by text: hybrid (the default
// for such a collection), text alone (BM25), and a file of queries with
// one JSON answer per line.
func Example_textQueries() {
	dir, err := os.MkdirTemp("", "mnemo-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	notes := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(notes, []byte(`{"id":"n1","content":"Paul works at Google as a search engineer","metadata":{"source":"chat"}}
{"id":"n2","content":"The team meets every Monday to plan the week","metadata":{"source":"calendar"}}
{"id":"n3","content":"Alice prefers tea over coffee in the morning","metadata":{"source":"chat"}}
{"id":"n4","content":"Coffee with Paul on Friday morning","metadata":{"source":"calendar"}}
{"id":"n5","content":"Paul moved to Lisbon last spring","metadata":{"source":"chat"}}
`), 0o644)
	questions := filepath.Join(dir, "questions.jsonl")
	os.WriteFile(questions, []byte(`{"id":"q1","text":"where does Paul work","k":2}
{"id":"q2","text":"coffee","filter":{"source":"calendar"}}
`), 0o644)
	db := filepath.Join(dir, "db")
	mnemo := func(args ...string) { run(context.Background(), args, os.Stdout, io.Discard) }

	mnemo("import", "--db", db, "--collection", "notes", "--embedder", "hashing", "--file", notes)
	mnemo("query", "--db", db, "--collection", "notes", "--text", "Lisbon", "--k", "1")
	mnemo("query", "--db", db, "--collection", "notes", "--text", "where does Paul work", "--k", "3", "--mode", "text")
	mnemo("query", "--db", db, "--collection", "notes", "--queries", questions, "--mode", "text")
	// Output:
	// committed 5
	// 1.0000  n5  Paul moved to Lisbon last spring
	// 1.9253  n1  Paul works at Google as a search engineer
	// 0.5870  n4  Coffee with Paul on Friday morning
	// 0.5390  n5  Paul moved to Lisbon last spring
	// {"id":"q1","hits":[{"id":"n1","score":1.9252908618525777,"content":"Paul works at Google as a search engineer","text_rank":1,"text_score":1.9252908618525777,"metadata":{"source":"chat"}},{"id":"n4","score":0.5870258918870851,"content":"Coffee with Paul on Friday morning","text_rank":2,"text_score":0.5870258918870851,"metadata":{"source":"calendar"}}]}
	// {"id":"q2","hits":[{"id":"n4","score":0.9534808030587029,"content":"Coffee with Paul on Friday morning","text_rank":1,"text_score":0.9534808030587029,"metadata":{"source":"calendar"}}]}
}
