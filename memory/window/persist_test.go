package window

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

func TestPersistentWindow(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewStored(context.Background(), db.Store(), "agent", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.RecordProtected(ctx, Message{Role: System, Content: "Always answer in French."})
	w.Record(ctx, Message{Role: User, Content: "Find flights"})
	w.Record(ctx, Message{Role: Assistant, Reasoning: "need a tool", ToolCalls: []ToolCall{
		{ID: "c1", Name: "flights", Arguments: `{"to":"LIS"}`}, {ID: "c2", Name: "hotels", Arguments: `{"in":"LIS"}`}}})
	w.Record(ctx, Message{Role: Tool, Content: "3 flights", ToolCallID: "c1"})
	before, _ := w.Context(ctx)
	w.Close()
	db.Close()

	db, _ = engine.Open(dir, nil)
	defer db.Close()
	w, err = NewStored(context.Background(), db.Store(), "agent", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := w.Context(ctx)
	if fmt.Sprintf("%+v", before) != fmt.Sprintf("%+v", after) {
		t.Fatalf("after reopen:\n%+v\nwant\n%+v", after, before)
	}
	// The restored tool calls still validate tool results: c2 still
	// waits for its result, c1 has one, c3 was never made.
	if err := w.Record(ctx, Message{Role: User, Content: "and?"}); !errors.Is(err, ErrUnansweredToolCalls) || !strings.Contains(err.Error(), `"c2"`) {
		t.Fatalf("a user message while c2 waits, after reopen: %v", err)
	}
	if err := w.Record(ctx, Message{Role: Tool, Content: "x", ToolCallID: "c3"}); !errors.Is(err, ErrUnknownToolCall) {
		t.Fatalf("unknown call after reopen: %v", err)
	}
	if err := w.Record(ctx, Message{Role: Tool, Content: "again", ToolCallID: "c1"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a second result for c1 after reopen: %v", err)
	}
	if err := w.Record(ctx, Message{Role: Tool, Content: "2 hotels", ToolCallID: "c2"}); err != nil {
		t.Fatal(err)
	}
	w.SetBudget(1)
	got, _ := w.Context(ctx)
	if got[0].Content != "Always answer in French." {
		t.Fatalf("the protected instruction was lost: %+v", got)
	}
}

func TestRecall(t *testing.T) {
	w, err := New(60, &Options{Recall: true, RecallShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Record(ctx, Message{Role: User, Content: "my dog is called Rex"})
	w.Record(ctx, Message{Role: Assistant, Content: "noted"})
	for i := 0; i < 6; i++ {
		w.Record(ctx, Message{Role: User, Content: fmt.Sprintf("filler question %d", i)})
		w.Record(ctx, Message{Role: Assistant, Content: "ok"})
	}
	w.Record(ctx, Message{Role: User, Content: "what is my dog called"})
	got, _ := w.Context(ctx)
	if got[0].Role != System || !strings.HasPrefix(got[0].Content, RecallHeader) || !strings.Contains(got[0].Content, "user: my dog is called Rex") {
		t.Fatalf("no recall block first: %+v", got)
	}
	if last := got[len(got)-1]; last.Content != "what is my dog called" {
		t.Fatalf("the newest round is not last: %+v", got)
	}
	total := 0
	for _, m := range got {
		total += DefaultCounter(m)
	}
	if total > 60 {
		t.Fatalf("%d tokens for a budget of 60", total)
	}
	plain, _ := New(30, nil) // the share the recall window keeps for rounds
	for _, m := range w.msgsCopy() {
		plain.Record(ctx, m)
	}
	if got, _ := plain.Context(ctx); strings.Contains(fmt.Sprint(got), "Rex") {
		t.Fatal("without recall the evicted fact should be gone")
	}
	if _, err := New(10, &Options{Recall: true, RecallShare: 1.5}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("share 1.5: %v", err)
	}
}

func (w *Window) msgsCopy() []Message {
	w.mu.Lock(context.Background())
	defer w.mu.Unlock()
	var out []Message
	for _, e := range w.msgs {
		out = append(out, e.m.clone())
	}
	return out
}

// TestSessionOpenTwice opens one session twice on one database and
// records through both, interleaved: with two message counters the
// windows would overwrite each other's messages. The second NewStored must
// fail until the first window is closed, and nothing recorded is lost.
func TestSessionOpenTwice(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := NewStored(context.Background(), db.Store(), "agent", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := NewStored(context.Background(), db.Store(), "agent", 1000, nil)
	if !errors.Is(err, ErrSessionOpen) {
		t.Errorf("second NewStored of an open session = %v, want ErrSessionOpen", err)
	}
	var want []string
	for i := range 3 {
		for j, w := range []*Window{first, second} {
			if w == nil {
				continue
			}
			m := fmt.Sprintf("message %d through window %d", i, j)
			if err := w.Record(ctx, Message{Role: User, Content: m}); err != nil {
				t.Fatal(err)
			}
			want = append(want, m)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Record(ctx, Message{Role: User, Content: "too late"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Record after Close = %v, want ErrClosed", err)
	}
	if second != nil {
		second.Close()
	}

	// After Close the session opens again on the same database, and after
	// a restart it has every message.
	again, err := NewStored(context.Background(), db.Store(), "agent", 1000, nil)
	if err != nil {
		t.Fatalf("NewStored after Close: %v", err)
	}
	again.Close()
	db.Close()
	db, err = engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := NewStored(context.Background(), db.Store(), "agent", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	got, _ := w.Context(ctx)
	if contents(got) != strings.Join(want, " ") {
		t.Fatalf("after reopen:\n%s\nwant\n%s", contents(got), strings.Join(want, " "))
	}
}

// TestOpenSessions checks that sessions are keyed by database and name.
func TestOpenSessions(t *testing.T) {
	open := func(t *testing.T) *engine.DB {
		db, err := engine.Open("", &engine.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db, other := open(t), open(t)
	held, err := NewStored(context.Background(), db.Store(), "agent", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	tests := []struct {
		name string
		db   *engine.DB
		sess string
		want error
	}{
		{"same database, same session", db, "agent", ErrSessionOpen},
		{"same database, another session", db, "helper", nil},
		{"another database, same session", other, "agent", nil},
		{"same database, same session with recall", db, "agent", ErrSessionOpen},
		{"no database", nil, "agent", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts *Options
			if strings.HasSuffix(tt.name, "recall") {
				opts = &Options{Recall: true}
			}
			w, err := NewStored(context.Background(), tt.db.Store(), tt.sess, 100, opts)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("NewStored = %v, want %v", err, tt.want)
			}
			if w != nil {
				w.Close()
			}
		})
	}
}

// TestRecallEmbedderMismatch reopens a session whose rounds were embedded
// by another embedder: that is embed.ErrMismatch, and the session is free
// again afterwards.
func TestRecallEmbedderMismatch(t *testing.T) {
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := NewStored(context.Background(), db.Store(), "agent", 100, &Options{Recall: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Record(ctx, Message{Role: User, Content: "my dog is called Rex"})
	w.Close()
	other, _ := embed.NewHashing(64)
	if _, err := NewStored(context.Background(), db.Store(), "agent", 100, &Options{Recall: true, Embedder: other}); !errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("another embedder = %v, want embed.ErrMismatch", err)
	}
	w, err = NewStored(context.Background(), db.Store(), "agent", 100, &Options{Recall: true})
	if err != nil {
		t.Fatalf("after the refused open: %v", err)
	}
	w.Close()
}

// TestOpenStored opens a session in a database the window owns: Close
// closes it (so it opens again), and the messages persist.
func TestOpenStored(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenStored(dir, "agent", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.RecordProtected(ctx, Message{Role: System, Content: "You are terse."})
	w.Record(ctx, Message{Role: User, Content: "the launch is on May 3"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = OpenStored(dir, "agent", 100, nil)
	if err != nil {
		t.Fatalf("reopen: %v (the database was left open?)", err)
	}
	defer w.Close()
	if got, _ := w.Context(ctx); contents(got) != "You are terse. the launch is on May 3" {
		t.Fatalf("after reopen: %q", contents(got))
	}
}

// TestHistoryAndSetMessages covers History, Len, SetMessages and Clear on
// an in-memory window.
func TestHistoryAndSetMessages(t *testing.T) {
	w, _ := New(10, &Options{Counter: byLen})
	w.RecordProtected(ctx, Message{Role: System, Content: "sys"})
	w.Record(ctx, Message{Role: User, Content: "first question"})
	w.Record(ctx, Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f"}}})
	w.Record(ctx, Message{Role: Tool, Content: "r", ToolCallID: "c1"})
	w.Record(ctx, Message{Role: User, Content: "second"})
	hist, err := w.History(ctx)
	if err != nil || w.Len() != 5 || len(hist) != 5 || contents(hist) != "sys first question  r second" {
		t.Fatalf("History = %q (Len %d), %v", contents(hist), w.Len(), err)
	}
	if !hist[0].Protected || hist[1].Protected {
		t.Fatalf("Protected not reported: %+v", hist[:2])
	}
	if got, _ := w.Context(ctx); contents(got) != "sys second" {
		t.Fatalf("Context = %q (the history should be trimmed)", contents(got))
	}
	hist[0].Content = "changed by the caller"
	if again, _ := w.History(ctx); again[0].Content != "sys" {
		t.Fatal("History shares memory with the window")
	}

	// A rejected replacement changes nothing.
	bad := []Message{{Role: User, Content: "q"}, {Role: Tool, Content: "r", ToolCallID: "c1"}}
	if err := w.SetMessages(ctx, bad); !errors.Is(err, ErrUnknownToolCall) || w.Len() != 5 {
		t.Fatalf("SetMessages(bad) = %v, Len %d", err, w.Len())
	}
	set := []Message{
		{Role: System, Content: "new system", Protected: true},
		{Role: User, Content: "summary of before"},
		{Role: Assistant, ToolCalls: []ToolCall{{ID: "c9", Name: "f"}}},
		{Role: Tool, Content: "ok", ToolCallID: "c9"},
		{Role: User, Content: "now"},
	}
	if err := w.SetMessages(ctx, set); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.History(ctx); contents(got) != "new system summary of before  ok now" {
		t.Fatalf("after SetMessages: %q", contents(got))
	}
	if got, _ := w.Context(ctx); contents(got) != "new system now" {
		t.Fatalf("Context after SetMessages = %q (the protected system message must stay)", contents(got))
	}
	if err := w.Record(ctx, Message{Role: Tool, Content: "late", ToolCallID: "c1"}); !errors.Is(err, ErrUnknownToolCall) {
		t.Fatalf("a tool call of the replaced history still answers: %v", err)
	}
	if err := w.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.History(ctx); w.Len() != 0 || len(got) != 0 {
		t.Fatalf("after Clear: %d messages", w.Len())
	}
	if err := w.Record(ctx, Message{Role: Tool, Content: "late", ToolCallID: "c9"}); !errors.Is(err, ErrUnknownToolCall) {
		t.Fatalf("a tool call survived Clear: %v", err)
	}
	w.Close()
	if _, err := w.History(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("History after Close = %v", err)
	}
	if err := w.Clear(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("Clear after Close = %v", err)
	}
}

// TestStoredSetMessagesAndClear checks that SetMessages and Clear persist:
// a reopened session has exactly the messages set, or none, and recall
// finds nothing of the replaced conversation.
func TestStoredSetMessagesAndClear(t *testing.T) {
	dir := t.TempDir()
	opts := &Options{Recall: true, RecallShare: 0.5}
	reopen := func(w *Window) *Window {
		t.Helper()
		if w != nil {
			w.Close()
		}
		w, err := OpenStored(dir, "agent", 40, opts)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := reopen(nil)
	w.RecordProtected(ctx, Message{Role: System, Content: "Be brief."})
	w.Record(ctx, Message{Role: User, Content: "My locker code is 4711."})
	for i := range 6 {
		w.Record(ctx, Message{Role: User, Content: fmt.Sprintf("Tell me a fun fact number %d.", i)})
	}
	set := []Message{{Role: System, Content: "Be brief.", Protected: true}, {Role: User, Content: "We talked about fun facts."}}
	if err := w.SetMessages(ctx, set); err != nil {
		t.Fatal(err)
	}
	w = reopen(w)
	if got, _ := w.History(ctx); w.Len() != 2 || contents(got) != "Be brief. We talked about fun facts." || !got[0].Protected {
		t.Fatalf("after SetMessages and reopen: %+v", got)
	}
	for i := range 6 {
		w.Record(ctx, Message{Role: User, Content: fmt.Sprintf("Another fact number %d.", i)})
	}
	w.Record(ctx, Message{Role: User, Content: "What is my locker code?"})
	if got, _ := w.Context(ctx); strings.Contains(contents(got), "4711") {
		t.Fatalf("recall brought back a replaced message: %q", contents(got))
	}
	if err := w.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	w = reopen(w)
	defer w.Close()
	if got, _ := w.History(ctx); w.Len() != 0 || len(got) != 0 {
		t.Fatalf("after Clear and reopen: %q", contents(got))
	}
	db := w.st.db
	for _, name := range []string{"agent.messages", "agent.rounds"} {
		c, err := db.Collection(ctx, name)
		if err != nil {
			t.Fatalf("%s after Clear: %v", name, err)
		}
		if n, err := c.Count(ctx); err != nil || n != 0 {
			t.Fatalf("%s after Clear: %v records, %v", name, n, err)
		}
	}
}

// TestRecallAfterSystemPrompt checks that the recall block follows the
// system prompt instead of preceding it.
func TestRecallAfterSystemPrompt(t *testing.T) {
	w, _ := New(50, &Options{Recall: true, RecallShare: 0.5})
	defer w.Close()
	w.RecordProtected(ctx, Message{Role: System, Content: "You are terse."})
	w.Record(ctx, Message{Role: User, Content: "My locker code is 4711."})
	for i := range 6 {
		w.Record(ctx, Message{Role: User, Content: fmt.Sprintf("Tell me a fun fact number %d.", i)})
	}
	w.Record(ctx, Message{Role: User, Content: "What is my locker code?"})
	got, err := w.Context(ctx)
	if err != nil || len(got) < 3 {
		t.Fatalf("Context = %+v, %v", got, err)
	}
	if got[0].Content != "You are terse." || !strings.HasPrefix(got[1].Content, RecallHeader) || !strings.Contains(got[1].Content, "4711") {
		t.Fatalf("want the system prompt, then the recall block: %+v", got[:2])
	}
	if got[len(got)-1].Content != "What is my locker code?" {
		t.Fatalf("the newest round is not last: %+v", got)
	}
}

// failAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: a deadline that runs out part way through a call.
type failAfter struct {
	context.Context
	n *int
}

func newFailAfter(n int) failAfter { return failAfter{context.Background(), &n} }

func (f failAfter) Err() error {
	if *f.n > 0 {
		*f.n--
		return nil
	}
	return context.Canceled
}

// TestSetMessagesAfterAFailedDelete: a SetMessages whose delete of the
// surplus failed leaves stale messages stored; the next successful
// SetMessages removes all of them, so a reopen shows exactly its messages.
func TestSetMessagesAfterAFailedDelete(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := OpenStored(dir, "s", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	many := func(n int) []Message {
		ms := make([]Message, n)
		for i := range ms {
			ms[i] = Message{Role: User, Content: fmt.Sprintf("message %d", i)}
		}
		return ms
	}
	if err := w.SetMessages(ctx, many(10)); err != nil {
		t.Fatal(err)
	}
	// The upsert goes through, the delete of the surplus is cancelled.
	if err := w.SetMessages(newFailAfter(2), many(3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("SetMessages with a context cancelled before the delete: %v", err)
	}
	if err := w.SetMessages(ctx, many(2)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w, err = OpenStored(dir, "s", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if h, _ := w.History(ctx); len(h) != 2 {
		t.Fatalf("after reopen: %d messages, want the 2 set last", len(h))
	}
}

// TestSessionNames: an empty, non-UTF-8 or over-long session name is
// ErrInvalid.
func TestSessionNames(t *testing.T) {
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"", "\xff\xfe", strings.Repeat("s", 300)} {
		if _, err := NewStored(context.Background(), db.Store(), name, 100, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("session %q: %v, want ErrInvalid", name, err)
		}
	}
}
