package mnemo

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/window"
)

// DefaultBudget is the token budget of a History's window when
// HistoryOptions.Budget is zero.
const DefaultBudget = 4000

// HistoryOptions configure a History; nil means the defaults.
type HistoryOptions struct {
	// Budget is the token budget of the window (History.Window.Context);
	// default DefaultBudget. Messages returns every message regardless.
	Budget int
	// Window configures the window (token counter, recall of evicted
	// rounds); nil means window's defaults.
	Window *window.Options
}

// History is a langchaingo chat message history kept by a stored mnemo
// window: every message is written to the database before the call
// returns, and a History opened again on the same session resumes the
// conversation. It is safe for concurrent use by multiple goroutines.
//
// Human, AI (with tool calls and reasoning), system and tool messages are
// kept; generic and function messages are refused with
// ErrUnsupportedMessage, as the window has no role for them.
type History struct {
	w *window.Window
}

var _ schema.ChatMessageHistory = (*History)(nil)

// NewHistory returns the history of session in db, any backend: an
// engine database the caller has open (engine.DB.Store) or a server
// (package postgres); ctx bounds loading the messages recorded before
// (see window.NewStored: a session is open in one History or window at a
// time, in every process). The caller keeps ownership of db; Close
// releases the session and leaves db open.
func NewHistory(ctx context.Context, db mnemo.Store, session string, opts *HistoryOptions) (*History, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	budget, wo := historyOptions(opts)
	w, err := window.NewStored(ctx, db, session, budget, wo)
	if err != nil {
		return nil, err
	}
	return &History{w: w}, nil
}

// OpenHistory opens (or creates) an embedded database in dir and returns
// the history of session in it; an empty dir means in memory only. Close
// closes the database.
func OpenHistory(dir, session string, opts *HistoryOptions) (*History, error) {
	budget, wo := historyOptions(opts)
	w, err := window.OpenStored(dir, session, budget, wo)
	if err != nil {
		return nil, err
	}
	return &History{w: w}, nil
}

func historyOptions(opts *HistoryOptions) (int, *window.Options) {
	if opts == nil {
		return DefaultBudget, nil
	}
	b := opts.Budget
	if b == 0 {
		b = DefaultBudget
	}
	return b, opts.Window
}

// Window returns the window behind the history: its Context is the part
// of the conversation that fits the token budget.
func (h *History) Window() *window.Window { return h.w }

// Close releases the session (and closes the database when OpenHistory
// opened it).
func (h *History) Close() error { return h.w.Close() }

// AddMessage appends message.
func (h *History) AddMessage(ctx context.Context, message llms.ChatMessage) error {
	m, err := toWindow(message)
	if err != nil {
		return err
	}
	return h.w.Record(ctx, m)
}

// AddUserMessage appends a human message.
func (h *History) AddUserMessage(ctx context.Context, message string) error {
	return h.w.Record(ctx, window.Message{Role: window.User, Content: message})
}

// AddAIMessage appends an AI message.
func (h *History) AddAIMessage(ctx context.Context, message string) error {
	return h.w.Record(ctx, window.Message{Role: window.Assistant, Content: message})
}

// Clear removes every message, from the database too.
func (h *History) Clear(ctx context.Context) error { return h.w.Clear(ctx) }

// Messages returns every message, oldest first; the caller owns the slice.
// AI messages come back as llms.AIChatMessage, with tool calls of type
// "function".
func (h *History) Messages(ctx context.Context) ([]llms.ChatMessage, error) {
	ms, err := h.w.History(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]llms.ChatMessage, len(ms))
	for i, m := range ms {
		out[i] = fromWindow(m)
	}
	return out, nil
}

// SetMessages replaces every message with messages, atomically: when one
// is refused, nothing changes.
func (h *History) SetMessages(ctx context.Context, messages []llms.ChatMessage) error {
	ms := make([]window.Message, len(messages))
	for i, m := range messages {
		var err error
		if ms[i], err = toWindow(m); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
	}
	return h.w.SetMessages(ctx, ms)
}

func toWindow(m llms.ChatMessage) (window.Message, error) {
	if m == nil {
		return window.Message{}, fmt.Errorf("%w: nil message", ErrInvalid)
	}
	switch m.GetType() {
	case llms.ChatMessageTypeHuman:
		return window.Message{Role: window.User, Content: m.GetContent()}, nil
	case llms.ChatMessageTypeSystem:
		return window.Message{Role: window.System, Content: m.GetContent()}, nil
	case llms.ChatMessageTypeTool:
		t, ok := m.(interface{ GetID() string })
		if !ok {
			return window.Message{}, fmt.Errorf("%w: a tool message of type %T has no call ID", ErrUnsupportedMessage, m)
		}
		return window.Message{Role: window.Tool, Content: m.GetContent(), ToolCallID: t.GetID()}, nil
	case llms.ChatMessageTypeAI:
		var ai llms.AIChatMessage
		switch v := m.(type) {
		case llms.AIChatMessage:
			ai = v
		case *llms.AIChatMessage:
			ai = *v
		default:
			ai.Content = m.GetContent()
		}
		return fromAI(ai)
	}
	return window.Message{}, fmt.Errorf("%w: %q messages", ErrUnsupportedMessage, m.GetType())
}

func fromAI(ai llms.AIChatMessage) (window.Message, error) {
	if ai.FunctionCall != nil {
		return window.Message{}, fmt.Errorf("%w: an AI message with the deprecated FunctionCall (use ToolCalls)", ErrUnsupportedMessage)
	}
	out := window.Message{Role: window.Assistant, Content: ai.Content, Reasoning: ai.ReasoningContent}
	for _, tc := range ai.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return window.Message{}, fmt.Errorf("%w: tool call %q of type %q", ErrUnsupportedMessage, tc.ID, tc.Type)
		}
		if tc.FunctionCall == nil {
			return window.Message{}, fmt.Errorf("%w: tool call %q names no function", ErrInvalid, tc.ID)
		}
		out.ToolCalls = append(out.ToolCalls, window.ToolCall{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments})
	}
	return out, nil
}

func fromWindow(m window.Message) llms.ChatMessage {
	switch m.Role {
	case window.User:
		return llms.HumanChatMessage{Content: m.Content}
	case window.System:
		return llms.SystemChatMessage{Content: m.Content}
	case window.Tool:
		return llms.ToolChatMessage{ID: m.ToolCallID, Content: m.Content}
	}
	ai := llms.AIChatMessage{Content: m.Content, ReasoningContent: m.Reasoning}
	for _, tc := range m.ToolCalls {
		ai.ToolCalls = append(ai.ToolCalls, llms.ToolCall{ID: tc.ID, Type: "function",
			FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return ai
}
