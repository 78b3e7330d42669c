package window

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

func call(id string) ToolCall { return ToolCall{ID: id, Name: "search", Arguments: `{"q":"x"}`} }

// TestToolResultAfterUserMessage is the ported agent's case: user U1, an
// assistant message calling c1, user U2, the result of c1, assistant A2.
// Recorded as is, a small budget returned "U2 | tool(c1) | A2", a result
// without its call. U2 must be refused while c1 waits, naming c1.
func TestToolResultAfterUserMessage(t *testing.T) {
	w, _ := New(10, &Options{Counter: byLen})
	mustRecord(t, w, Message{Role: User, Content: "U1"})
	mustRecord(t, w, Message{Role: Assistant, ToolCalls: []ToolCall{call("c1")}})
	err := w.Record(ctx, Message{Role: User, Content: "U2"})
	if !errors.Is(err, ErrUnansweredToolCalls) || !strings.Contains(err.Error(), `"c1"`) {
		t.Fatalf("U2 while c1 waits = %v, want ErrUnansweredToolCalls naming c1", err)
	}
	mustRecord(t, w, Message{Role: Tool, Content: "R1", ToolCallID: "c1"})
	mustRecord(t, w, Message{Role: User, Content: "U2"})
	mustRecord(t, w, Message{Role: Assistant, Content: "A2"})
	for budget := 1; budget <= 12; budget++ {
		w.SetBudget(budget)
		got, _ := w.Context(ctx)
		checkPairing(t, got)
	}
	w.SetBudget(4)
	if got, _ := w.Context(ctx); contents(got) != "U2 A2" {
		t.Fatalf("Context = %q, want the newest round alone", contents(got))
	}
}

// TestToolCallOrder covers each rule of toolcalls.go on Record, on
// RecordProtected and on SetMessages.
func TestToolCallOrder(t *testing.T) {
	answered := []Message{
		{Role: User, Content: "U1"},
		{Role: Assistant, ToolCalls: []ToolCall{call("c1"), call("c2")}},
		{Role: Tool, Content: "R2", ToolCallID: "c2"}, // any order among the results
		{Role: Tool, Content: "R1", ToolCallID: "c1"},
	}
	tests := []struct {
		name string
		msgs []Message // recorded before next
		next Message
		want error // nil: accepted
	}{
		{"results in any order", answered[:3], answered[3], nil},
		{"user message while a call waits", answered[:3], Message{Role: User, Content: "U2"}, ErrUnansweredToolCalls},
		{"assistant message while a call waits", answered[:2], Message{Role: Assistant, Content: "A"}, ErrUnansweredToolCalls},
		{"system message while a call waits", answered[:2], Message{Role: System, Content: "S"}, ErrUnansweredToolCalls},
		{"new calls while a call waits", answered[:3], Message{Role: Assistant, ToolCalls: []ToolCall{call("c3")}}, ErrUnansweredToolCalls},
		{"user message once all are answered", answered, Message{Role: User, Content: "U2"}, nil},
		{"a second result for a call", answered, Message{Role: Tool, Content: "again", ToolCallID: "c1"}, ErrInvalid},
		{"result after a user message", append(answered[:4:4], Message{Role: User, Content: "U2"}), Message{Role: Tool, Content: "late", ToolCallID: "c1"}, ErrSeparatedToolResult},
		{"result after the next call", append(answered[:4:4], Message{Role: Assistant, ToolCalls: []ToolCall{call("c3")}}), Message{Role: Tool, Content: "late", ToolCallID: "c1"}, ErrSeparatedToolResult},
		{"result whose call was never recorded", answered, Message{Role: Tool, Content: "?", ToolCallID: "c9"}, ErrUnknownToolCall},
		{"two calls with one ID", answered[:1], Message{Role: Assistant, ToolCalls: []ToolCall{call("c1"), call("c1")}}, ErrInvalid},
		{"a call ID reused by a later message", answered, Message{Role: Assistant, ToolCalls: []ToolCall{call("c1")}}, nil},
	}
	for _, tt := range tests {
		for _, how := range []string{"Record", "RecordProtected", "SetMessages"} {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				w, _ := New(100, nil)
				for _, m := range tt.msgs {
					mustRecord(t, w, m)
				}
				var err error
				switch how {
				case "Record":
					err = w.Record(ctx, tt.next)
				case "RecordProtected":
					err = w.RecordProtected(ctx, tt.next)
				default:
					err = w.SetMessages(ctx, append(tt.msgs[:len(tt.msgs):len(tt.msgs)], tt.next))
				}
				if (tt.want == nil) != (err == nil) || !errors.Is(err, tt.want) {
					t.Fatalf("%s(%+v) = %v, want %v", how, tt.next, err, tt.want)
				}
				if want := len(tt.msgs) + map[bool]int{true: 1}[err == nil]; w.Len() != want {
					t.Fatalf("Len = %d after %s, want %d", w.Len(), how, want)
				}
			})
		}
	}
}

// TestUnansweredCallsInContext: while an assistant message's calls wait
// for results, Context returns them as they are (the newest round is
// always kept), and the results join them once recorded.
func TestUnansweredCallsInContext(t *testing.T) {
	w, _ := New(1, &Options{Counter: byLen})
	mustRecord(t, w, Message{Role: User, Content: "old question"})
	mustRecord(t, w, Message{Role: User, Content: "U"})
	mustRecord(t, w, Message{Role: Assistant, ToolCalls: []ToolCall{call("c1")}})
	got, _ := w.Context(ctx)
	if len(got) != 2 || got[1].ToolCalls[0].ID != "c1" {
		t.Fatalf("Context while c1 waits = %+v", got)
	}
	mustRecord(t, w, Message{Role: Tool, Content: "R", ToolCallID: "c1"})
	got, _ = w.Context(ctx)
	checkPairing(t, got)
	if contents(got) != "U  R" {
		t.Fatalf("Context = %q", contents(got))
	}
}

// TestStoredSeparatedResult opens a session stored before results had to
// follow their calls, holding U1, a call c1, U2, the result of c1 and A2:
// it loads as it is, and trimming keeps the call, the user message
// recorded in between and the result together, whatever the budget; the
// recall index is rebuilt for the joined rounds.
func TestStoredSeparatedResult(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := []Message{
		{Role: User, Content: "old question about the weather"},
		{Role: Assistant, Content: "old answer"},
		{Role: User, Content: "U1 find flights to Lisbon"},
		{Role: Assistant, ToolCalls: []ToolCall{call("c1")}},
		{Role: User, Content: "U2 and hotels"},
		{Role: Tool, Content: "R1 three flights", ToolCallID: "c1"},
		{Role: Assistant, Content: "A2"},
	}
	msgs, err := db.CreateCollection(ctx, "s.messages", mnemo.CollectionConfig{Dimension: 1, Metric: mnemo.L2, Index: mnemo.Flat})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range old {
		if _, err := msgs.Upsert(ctx, messageRecord(i, entry{m: m})); err != nil {
			t.Fatal(err)
		}
	}
	w, err := NewStored(context.Background(), db.Store(), "s", 1, &Options{Counter: byLen, Recall: true, RecallShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer w.Close()
	if w.Len() != len(old) {
		t.Fatalf("loaded %d messages, want %d", w.Len(), len(old))
	}
	for budget := 1; budget <= 200; budget += 7 {
		w.SetBudget(budget)
		got, err := w.Context(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(contents(got), "U1 find flights to Lisbon  U2 and hotels R1 three flights A2") {
			t.Fatalf("budget %d: Context = %q, want the call, U2 and the result together", budget, contents(got))
		}
	}
	rounds, _ := db.Collection("s.rounds")
	if n := rounds.Count(); n != 2 {
		t.Fatalf("the recall index holds %d rounds, want the 2 of the loaded session", n)
	}
	// The loaded session takes new messages under the rules.
	if err := w.Record(ctx, Message{Role: Tool, Content: "late", ToolCallID: "c1"}); !errors.Is(err, ErrSeparatedToolResult) {
		t.Fatalf("another result for c1 = %v, want ErrSeparatedToolResult", err)
	}
}

func mustRecord(t *testing.T, w *Window, m Message) {
	t.Helper()
	if err := w.Record(ctx, m); err != nil {
		t.Fatal(err)
	}
}
