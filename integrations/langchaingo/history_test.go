package mnemo

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
	"github.com/mnemodb/mnemo/memory/window"
)

// newHistory returns the history of session in db, closed when t ends.
func newHistory(t *testing.T, db mnemo.Store, session string, opts *HistoryOptions) *History {
	t.Helper()
	h, err := NewHistory(ctx, db, session, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

var conversation = []llms.ChatMessage{
	llms.SystemChatMessage{Content: "You are a helpful assistant."},
	llms.HumanChatMessage{Content: "What's the weather in Paris?"},
	llms.AIChatMessage{ReasoningContent: "I should look it up.", ToolCalls: []llms.ToolCall{{
		ID: "call-1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "weather", Arguments: `{"city":"Paris"}`},
	}}},
	llms.ToolChatMessage{ID: "call-1", Content: "rainy, 12 C"},
	llms.AIChatMessage{Content: "It is rainy and 12 C in Paris."},
}

func TestHistory(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		h := newHistory(t, db, "s1", nil)
		var hist schema.ChatMessageHistory = h
		for _, m := range conversation[:4] {
			if err := hist.AddMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := hist.AddAIMessage(ctx, "It is rainy and 12 C in Paris."); err != nil {
			t.Fatal(err)
		}
		got, err := hist.Messages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, conversation) {
			t.Fatalf("Messages:\n%#v\nwant\n%#v", got, conversation)
		}
		if err := hist.AddUserMessage(ctx, "Thanks!"); err != nil {
			t.Fatal(err)
		}
		if got, _ := hist.Messages(ctx); len(got) != 6 || got[5] != (llms.HumanChatMessage{Content: "Thanks!"}) {
			t.Fatalf("after AddUserMessage: %#v", got)
		}
		if err := hist.SetMessages(ctx, conversation[:2]); err != nil {
			t.Fatal(err)
		}
		if got, _ := hist.Messages(ctx); !reflect.DeepEqual(got, conversation[:2]) {
			t.Fatalf("after SetMessages: %#v", got)
		}
		if err := hist.Clear(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := hist.Messages(ctx); len(got) != 0 {
			t.Fatalf("after Clear: %#v", got)
		}
	})
}

func TestHistoryRefuses(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		h := newHistory(t, db, "s1", nil)
		if err := h.SetMessages(ctx, conversation); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			msg  llms.ChatMessage
			want error
		}{
			{"generic", llms.GenericChatMessage{Role: "narrator", Content: "x"}, ErrUnsupportedMessage},
			{"function", llms.FunctionChatMessage{Name: "f", Content: "x"}, ErrUnsupportedMessage},
			{"deprecated function call", llms.AIChatMessage{FunctionCall: &llms.FunctionCall{Name: "f"}}, ErrUnsupportedMessage},
			{"tool call of another type", llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: "c", Type: "retrieval", FunctionCall: &llms.FunctionCall{Name: "f"}}}}, ErrUnsupportedMessage},
			{"tool call without function", llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: "c", Type: "function"}}}, ErrInvalid},
			{"tool result for no call", llms.ToolChatMessage{ID: "call-9", Content: "x"}, window.ErrUnknownToolCall},
			{"nil", nil, ErrInvalid},
		}
		for _, tt := range tests {
			if err := h.AddMessage(ctx, tt.msg); !errors.Is(err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
			}
			// SetMessages with one bad message changes nothing.
			if err := h.SetMessages(ctx, append([]llms.ChatMessage{llms.HumanChatMessage{Content: "hi"}}, tt.msg)); !errors.Is(err, tt.want) {
				t.Errorf("SetMessages %s: %v, want %v", tt.name, err, tt.want)
			}
		}
		if got, _ := h.Messages(ctx); !reflect.DeepEqual(got, conversation) {
			t.Fatalf("refused messages changed the history: %#v", got)
		}
		// Pointers to langchaingo's message types are messages too.
		if err := h.AddMessage(ctx, &llms.HumanChatMessage{Content: "and Rome?"}); err != nil {
			t.Fatal(err)
		}
		if err := h.AddMessage(ctx, &llms.AIChatMessage{Content: "Sunny."}); err != nil {
			t.Fatal(err)
		}
		got, _ := h.Messages(ctx)
		if len(got) != len(conversation)+2 || !reflect.DeepEqual(got[len(got)-1], llms.AIChatMessage{Content: "Sunny."}) {
			t.Fatalf("pointer messages: %#v", got[len(conversation):])
		}
	})
	if _, err := NewHistory(ctx, nil, "s1", nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("nil database: %v, want ErrInvalid", err)
	}
}

// TestHistoryPersistence: a history opened again on the same session,
// through a new handle of the database, resumes the conversation.
func TestHistoryPersistence(t *testing.T) {
	vectorstoretest.RunReopen(t, func(t *testing.T, open func() mnemo.Store) {
		db := open()
		h := newHistory(t, db, "assistant", &HistoryOptions{Budget: 20})
		if err := h.SetMessages(ctx, conversation); err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		h = newHistory(t, open(), "assistant", &HistoryOptions{Budget: 20})
		got, err := h.Messages(ctx)
		if err != nil || !reflect.DeepEqual(got, conversation) {
			t.Fatalf("after reopen: %#v, %v", got, err)
		}
		// The window of the same conversation keeps the newest round within
		// the 20-token budget, and Messages still returns everything.
		ctxMsgs, err := h.Window().Context(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ctxMsgs) >= len(conversation) || ctxMsgs[len(ctxMsgs)-1].Content != "It is rainy and 12 C in Paris." {
			t.Fatalf("window context: %#v", ctxMsgs)
		}
	})
}
