package window

import (
	"fmt"
	"testing"
)

// record plays a conversation of n rounds into w: a question, a tool
// call, its result and an answer.
func recordRounds(b *testing.B, w *Window, n int) {
	for i := range n {
		id := fmt.Sprint("c", i)
		for _, m := range []Message{
			{Role: User, Content: fmt.Sprintf("question number %d about the weather in some city", i)},
			{Role: Assistant, ToolCalls: []ToolCall{{ID: id, Name: "weather", Arguments: `{"city":"Lisbon"}`}}},
			{Role: Tool, ToolCallID: id, Content: "21 degrees and sunny with a light breeze"},
			{Role: Assistant, Content: "It is 21 degrees and sunny in Lisbon today."},
		} {
			if err := w.Record(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRecordSession records a session of 200 rounds (800 messages)
// with tool calls into an in-memory window.
func BenchmarkRecordSession(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		w, _ := New(2000, nil)
		recordRounds(b, w, 200)
	}
	b.ReportMetric(float64(800*b.N)/b.Elapsed().Seconds(), "messages/s")
}

// BenchmarkContext trims a session of 500 rounds to a 2000-token budget.
func BenchmarkContext(b *testing.B) {
	w, _ := New(2000, nil)
	recordRounds(b, w, 500)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Context(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
