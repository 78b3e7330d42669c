package window

import (
	"fmt"
	"slices"
)

// Tool calls and their results.
//
// Chat APIs accept a tool result only right after the assistant message
// that made its call: OpenAI wants the tool messages to follow the
// assistant message with tool_calls immediately, Anthropic wants the
// tool_result blocks in the very next user turn. A window therefore
// enforces that order when a message is recorded, rather than repairing it
// when the context is read:
//
//   - after an assistant message with tool calls, only tool results may be
//     recorded until every one of its calls has one (ErrUnansweredToolCalls
//     names the calls still waiting); record an error result for a call
//     that failed or was cancelled;
//   - a tool result must answer a call of that assistant message: a result
//     whose call was never recorded is ErrUnknownToolCall, and one whose
//     call was followed by another message is ErrSeparatedToolResult.
//
// A call and its results are then always in one round, and rounds are
// kept or trimmed whole, so a context never holds a result without its
// call or a call followed by anything but its results. The one exception
// is the newest round while its calls wait for results: Context returns
// them as they are, for the agent to answer before it asks the model.
//
// Sessions stored before these rules may hold a result recorded after a
// later user message. Such a result joins its call's round and every round
// between them into one (see rounds), so trimming never separates them.

// toolCalls tracks the tool calls of a conversation, recording order.
type toolCalls struct {
	seen map[string]bool // the ID of every call recorded
	// open maps each call of the last assistant message to whether it has
	// a result, as long as only tool results followed that message; order
	// holds the same IDs in the order of the message's calls.
	open  map[string]bool
	order []string
}

func newToolCalls() *toolCalls { return &toolCalls{seen: map[string]bool{}} }

// unanswered returns the calls of the last assistant message that have no
// result yet, in call order.
func (tc *toolCalls) unanswered() []string {
	var out []string
	for _, id := range tc.order {
		if !tc.open[id] {
			out = append(out, id)
		}
	}
	return out
}

// check reports whether m may be recorded next. check validates only the
// order of calls and results; the caller has validated m itself.
func (tc *toolCalls) check(m Message) error {
	if m.Role == Tool {
		answered, open := tc.open[m.ToolCallID]
		switch {
		case open && answered:
			return fmt.Errorf("%w: tool call %q already has a result", ErrInvalid, m.ToolCallID)
		case open:
			return nil
		case tc.seen[m.ToolCallID]:
			return fmt.Errorf("%w: the result for tool call %q comes after other messages that followed the call; "+
				"record each result right after the assistant message that made the call", ErrSeparatedToolResult, m.ToolCallID)
		}
		return fmt.Errorf("%w: %q", ErrUnknownToolCall, m.ToolCallID)
	}
	if waiting := tc.unanswered(); len(waiting) > 0 {
		return fmt.Errorf("%w: %q still waiting, so a %s message cannot come next; "+
			"record a result for each (an error result for a call that failed)", ErrUnansweredToolCalls, waiting, m.Role)
	}
	ids := make(map[string]bool, len(m.ToolCalls))
	for _, c := range m.ToolCalls {
		if ids[c.ID] {
			return fmt.Errorf("%w: two tool calls with the ID %q in one message", ErrInvalid, c.ID)
		}
		ids[c.ID] = true
	}
	return nil
}

// add notes that m was recorded and reports whether m is a tool result
// away from its call. It accepts any order, so that sessions stored
// before the rules were enforced load as they are.
func (tc *toolCalls) add(m Message) (separated bool) {
	switch {
	case m.Role == Tool:
		if _, ok := tc.open[m.ToolCallID]; !ok {
			return true
		}
		tc.open[m.ToolCallID] = true
	case len(m.ToolCalls) > 0:
		tc.open, tc.order = make(map[string]bool, len(m.ToolCalls)), tc.order[:0]
		for _, c := range m.ToolCalls {
			tc.seen[c.ID] = true
			tc.open[c.ID] = false
			tc.order = append(tc.order, c.ID)
		}
	default:
		tc.open, tc.order = nil, tc.order[:0]
	}
	return false
}

// rounds splits the messages into rounds (see the package doc): a round
// starts at every user message. A tool result in a later round than its
// call, which only sessions stored before the rules above can hold
// (w.separated), joins the rounds from its call's to its own into one.
// O(messages). The caller holds w.mu.
func (w *Window) rounds() []round {
	var rs []round
	var callRound map[string]int // call ID -> round of its latest assistant message
	for i, e := range w.msgs {
		if i == 0 || e.m.Role == User {
			rs = append(rs, round{start: i, end: i})
		}
		if j, ok := callRound[e.m.ToolCallID]; ok && e.m.Role == Tool && j < len(rs)-1 {
			rs = mergeRounds(rs, j)
			for id, k := range callRound {
				callRound[id] = min(k, j)
			}
		}
		r := &rs[len(rs)-1]
		r.end = i + 1
		r.tokens += e.tokens
		r.protected = r.protected || e.protected
		if w.separated && len(e.m.ToolCalls) > 0 {
			if callRound == nil {
				callRound = map[string]int{}
			}
			for _, c := range e.m.ToolCalls {
				callRound[c.ID] = len(rs) - 1
			}
		}
	}
	return rs
}

// mergeRounds joins rs[j:] into rs[j].
func mergeRounds(rs []round, j int) []round {
	m := rs[j]
	for _, r := range rs[j+1:] {
		m.end, m.tokens, m.protected = r.end, m.tokens+r.tokens, m.protected || r.protected
	}
	rs = slices.Delete(rs, j+1, len(rs))
	rs[j] = m
	return rs
}
