package main

import (
	"strings"
	"testing"
)

// TestRun runs the example and checks what it prints: each adapter
// recalls what the example says it does, and the memories survive a
// reopen.
func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), t.TempDir(), &out); err != nil {
		t.Fatal(err)
	}
	want := `tool call: get_weather map[city:Paris] (0.532)
facts: ["Paul works at Google" "Paul is married to Sarah"]
documents: "Use detailed responses.", /travel/lisbon.md
conversation: system: "You are a helpful, terse assistant."
conversation: system: "Recalled from earlier in this conversation:\n\nuser: My locker code is 4711.\nassistant: Noted."
conversation: user: "How long should pasta rest?"
conversation: assistant: "It should not; serve it at once."
conversation: user: "What is my locker code?"
model context: The user's favourite programming language is Go
after reopening: 3 tool calls
`
	if got := out.String(); got != want {
		t.Errorf("the example printed\n%s\nwant\n%s", got, want)
	}
}
