// Package window is a windowed conversation memory, the Go form of
// molo_agent's Memory trait and WindowMemory: it records every message of a
// session and, each time the agent asks for the context, returns the part
// of the conversation that fits a token budget.
//
// # Rounds
//
// The unit of trimming is the round: a user message and everything after
// it up to the next user message (assistant replies, tool calls and their
// results). Messages before the first user message (a system prompt) form
// a round of their own. When Context is called:
//
//   - the newest round is always kept, even over budget;
//   - every round holding a protected message (RecordProtected) is kept;
//   - older rounds are then added newest-first while they fit; the first
//     that does not fit ends the window (history stays contiguous);
//   - kept rounds come back in chronological order. (The original moves
//     protected rounds to the front, which reorders history; we do not.)
//
// Trimming happens on read and changes nothing stored: raising the budget
// brings history back.
//
// # Tool calls and results
//
// No context may hold a tool result without the assistant message that
// made its call, or that message without its results followed by other
// messages: chat APIs refuse both (OpenAI wants the tool messages right
// after the assistant message with tool_calls, Anthropic the tool_result
// blocks in the very next user turn). Record therefore takes a tool result
// only right after its call's assistant message (or that message's other
// results), and nothing else while a call of that message waits for its
// result (ErrUnansweredToolCalls, ErrSeparatedToolResult,
// ErrUnknownToolCall); SetMessages checks the same. A call and its results
// then share a round, which is kept or trimmed whole. Record an error
// result for a call that failed, so the conversation can go on.
//
// # System prompts and protection
//
// A message recorded with Record is trimmed like any other, system
// messages included: record the system prompt and other standing
// instructions with RecordProtected (or keep them outside the window and
// prepend them to each context). Protection keeps the whole round of a
// protected message, as the original does: a protected message recorded
// in a conversation's round keeps that round's user message and replies
// too, and a call with its results. To protect an instruction alone,
// record it protected before the first user message, where it forms a
// round with the other leading system messages.
package window

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/ctxsync"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/metrics"
)

// Role is who produced a message.
type Role string

// Roles.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// ToolCall is a tool invocation requested by an assistant message.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON
}

// Message is one message of a conversation.
type Message struct {
	Role       Role
	Content    string
	Reasoning  string     // optional model reasoning
	ToolCalls  []ToolCall // assistant messages only
	ToolCallID string     // tool messages only: the call this answers
	// Protected marks a message trimming never removes: RecordProtected
	// sets it, Record and SetMessages keep it when set, and History and
	// Context report it.
	Protected bool
}

// clone copies m, so callers and the window never share slices.
func (m Message) clone() Message {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	return m
}

// Memory is the contract the inference loop uses.
type Memory interface {
	// Record appends a message to the session.
	Record(ctx context.Context, m Message) error
	// RecordProtected appends a message that trimming must never remove.
	RecordProtected(ctx context.Context, m Message) error
	// Context returns the messages the model should see, chronologically;
	// the caller owns the returned slice.
	Context(ctx context.Context) ([]Message, error)
}

// Counter estimates the tokens of a message.
type Counter func(Message) int

// DefaultCounter counts content, reasoning and tool-call arguments (not
// tool names): in each piece every CJK ideograph is one token and the rest
// of the text ceil(characters/4).
func DefaultCounter(m Message) int {
	n := pieceTokens(m.Content) + pieceTokens(m.Reasoning)
	for _, c := range m.ToolCalls {
		n += pieceTokens(c.Arguments)
	}
	return n
}

func pieceTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + int(math.Ceil(float64(other)/4))
}

// Window is an in-memory windowed conversation memory. It is safe for
// concurrent use by multiple goroutines.
type Window struct {
	mu      ctxsync.Mutex // a caller waiting for it gives up when its ctx is done
	budget  int
	counter Counter
	msgs    []entry
	calls   *toolCalls // the calls recorded and those waiting for results
	// separated is set when a loaded session holds a tool result away from
	// its call (see toolcalls.go); Record and SetMessages never make one.
	separated bool
	recall    bool
	share     float64
	minSim    float32 // recall's cutoff
	st        *store  // engine backing; nil for a plain in-memory window
	log       *slog.Logger
	closed    bool // set by Close
	// Recall entries that may not match their rounds' messages, to
	// re-index (see repair in persist.go).
	stale    map[int]bool
	staleAll bool
	// trimPending is set while stored messages past len(msgs) may remain
	// from a SetMessages (see persistAll).
	trimPending bool
	// reload is set after a write whose outcome is unknown: the window
	// reads the session again before its next write (see resync).
	reload bool
	// lost is set once the session's lock was found lost (ErrSessionLost).
	lost error
}

type entry struct {
	m         Message
	protected bool
	tokens    int
}

// Options configure a Window; nil means the defaults.
type Options struct {
	// Counter estimates tokens; default DefaultCounter.
	Counter Counter
	// Recall keeps evicted rounds searchable and spends RecallShare of the
	// budget (default 0.25) on those most relevant to the newest user
	// message.
	Recall      bool
	RecallShare float64
	// MinSimilarity is the cosine similarity to the newest user message
	// below which an evicted round is never recalled, set as
	// new(float32(x)) in [-1, 1]; nil means the embedder's own scale
	// (embed.Calibrated: 0.05 for the offline hashing embedder) or
	// DefaultMinSimilarity.
	MinSimilarity *float32
	// Embedder for recall; nil means the offline hashing embedder, which
	// matches words, not meaning (to choose it: e, err := embed.NewHashing(0)).
	Embedder embed.Embedder
	// Logger receives the window's diagnostic messages (a recall index
	// left to repair on a later call, with the error) and, for a window
	// whose database it opens itself (recall in memory, OpenStored), the
	// engine's. Default: discarded.
	Logger *slog.Logger
	// Metrics receives an embed event for every embedding recall asks
	// for (see package metrics), and the engine's events of a database
	// the window opens itself; a database given to NewStored reports
	// through the options it was opened with. Default nil: off.
	Metrics metrics.Recorder
}

// DefaultMinSimilarity is the recall cutoff for embedders that do not
// state their own scale (embed.Calibrated).
const DefaultMinSimilarity = 0.5

// New returns an empty window with a token budget (> 0).
func New(budget int, opts *Options) (*Window, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("%w: budget %d, want > 0", ErrInvalid, budget)
	}
	w := &Window{budget: budget, counter: DefaultCounter, calls: newToolCalls()}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Counter != nil {
		w.counter = o.Counter
	}
	obs := textvec.Observe{Logger: o.Logger, Metrics: o.Metrics}
	w.log = obs.Log()
	if o.Recall {
		if o.RecallShare == 0 {
			o.RecallShare = 0.25
		}
		if !(o.RecallShare > 0 && o.RecallShare < 1) { // NaN too
			return nil, fmt.Errorf("%w: RecallShare %v, want between 0 and 1", ErrInvalid, o.RecallShare)
		}
		if err := textvec.CheckCutoff(ErrInvalid, "MinSimilarity", o.MinSimilarity, -1, 1); err != nil {
			return nil, err
		}
		space, err := textvec.New(o.Embedder, errNothing, ErrInvalid, obs)
		if err != nil {
			return nil, err
		}
		w.minSim = DefaultMinSimilarity
		if c, ok := space.Embedder().(embed.Calibrated); ok {
			w.minSim = c.RelatedSimilarity()
		}
		if o.MinSimilarity != nil {
			w.minSim = *o.MinSimilarity
		}
		st, err := newRecallStore(space, obs)
		if err != nil {
			return nil, err
		}
		w.recall, w.share, w.st = true, o.RecallShare, st
	}
	return w, nil
}

// SetBudget changes the token budget; nothing recorded is lost.
func (w *Window) SetBudget(budget int) error {
	if budget <= 0 {
		return fmt.Errorf("%w: budget %d, want > 0", ErrInvalid, budget)
	}
	w.mu.Lock(context.Background())
	w.budget = budget
	w.mu.Unlock()
	return nil
}

// Record appends m.
func (w *Window) Record(ctx context.Context, m Message) error { return w.record(ctx, m, false) }

// RecordProtected appends m; the round holding it is never trimmed.
func (w *Window) RecordProtected(ctx context.Context, m Message) error {
	return w.record(ctx, m, true)
}

// record records m. It returns an error only when m was not stored, and
// then nothing changed; with recall, a failure to re-index m's round
// after m was stored leaves the round for a later call to repair (see
// persist.go).
func (w *Window) record(ctx context.Context, m Message, protected bool) error {
	if err := w.mu.Lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.writable(ctx); err != nil {
		return err
	}
	if err := check(m, w.calls); err != nil {
		return err
	}
	m.Protected = m.Protected || protected
	e := entry{m.clone(), m.Protected, w.counter(m)}
	if err := w.persist(ctx, len(w.msgs), e); err != nil {
		return err
	}
	w.calls.add(m)
	w.msgs = append(w.msgs, e)
	if w.recall {
		rs := w.rounds()
		if w.stale == nil {
			w.stale = map[int]bool{}
		}
		w.stale[len(rs)-1] = true
		w.repair(ctx) // what fails stays stale: the message is stored
	}
	return nil
}

// check validates m against calls, the tool calls recorded before it
// (see toolcalls.go).
func check(m Message, calls *toolCalls) error {
	switch m.Role {
	case System, User, Assistant, Tool:
	default:
		return fmt.Errorf("%w: unknown role %q", ErrInvalid, m.Role)
	}
	if len(m.ToolCalls) > 0 && m.Role != Assistant {
		return fmt.Errorf("%w: a %s message cannot carry tool calls", ErrInvalid, m.Role)
	}
	for _, c := range m.ToolCalls {
		if c.ID == "" {
			return fmt.Errorf("%w: a tool call without an ID", ErrInvalid)
		}
		if !validUTF8(c.ID, c.Name, c.Arguments) {
			return fmt.Errorf("%w: tool call %q is not valid UTF-8", ErrInvalid, c.ID)
		}
	}
	if !validUTF8(m.Content, m.Reasoning, m.ToolCallID) {
		return fmt.Errorf("%w: a message that is not valid UTF-8", ErrInvalid)
	}
	switch {
	case m.Role == Tool && m.ToolCallID == "":
		return fmt.Errorf("%w: a tool message without a tool call ID", ErrInvalid)
	case m.Role != Tool && m.ToolCallID != "":
		return fmt.Errorf("%w: only tool messages answer a tool call", ErrInvalid)
	}
	return calls.check(m)
}

func validUTF8(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// Context returns the window (see the package doc). When recall fails
// (the embedder or the recall index), it returns the window without the
// recalled rounds, usable as it is, and an error wrapping ErrRecall.
func (w *Window) Context(ctx context.Context) ([]Message, error) {
	out, _, err := w.ContextReport(ctx)
	return out, err
}

// ContextReport is Context that also reports what the window kept, what
// it recalled and which evicted rounds it passed over, and why. The
// report is nil when the window could not be read (an error other than
// ErrRecall).
func (w *Window) ContextReport(ctx context.Context) ([]Message, *Report, error) {
	if err := w.mu.Lock(ctx); err != nil {
		return nil, nil, err
	}
	defer w.mu.Unlock()
	if w.closed {
		return nil, nil, ErrClosed
	}
	if err := w.resync(ctx); err != nil {
		return nil, nil, err
	}
	rs := w.rounds()
	rep := &Report{Budget: w.budget}
	if !w.recall {
		return w.render(rs, w.keep(rs, w.budget), rep), rep, nil
	}
	w.repair(ctx) // rounds a failed write left stale; what fails stays so
	keep := w.keep(rs, w.budget-int(float64(w.budget)*w.share))
	block, ok, err := w.recalled(ctx, rs, keep, rep)
	if err != nil || !ok {
		// Nothing to recall: the window has the whole budget.
		rep.Recalled, rep.Tokens = nil, 0
		out := w.render(rs, w.keep(rs, w.budget), rep)
		if err != nil {
			return out, rep, fmt.Errorf("%w: %w", ErrRecall, err)
		}
		return out, rep, nil
	}
	out := w.render(rs, keep, rep)
	rep.Tokens += w.counter(block)
	// The block goes after the leading system messages (the system prompt
	// and the instructions kept with it), never ahead of them.
	i := 0
	for i < len(out) && out[i].Role == System {
		i++
	}
	return slices.Insert(out, i, block), rep, nil
}

// Report is what one Context call handed to the model (ContextReport).
// Rounds are numbered from 0 in recording order; a round is a user
// message and what follows it up to the next one (see the package doc).
type Report struct {
	// Budget is the token budget and Tokens what the returned messages
	// count (more than Budget only when the newest round and the
	// protected ones alone exceed it).
	Budget, Tokens int
	// Kept are the rounds returned as messages, chronologically.
	Kept []int
	// Recalled are the evicted rounds in the recall block, most relevant
	// first (the block holds them chronologically).
	Recalled []RecallItem
	// Dropped are the evicted rounds the recall search returned and
	// Context left out, most relevant first, each with its Reason.
	Dropped []RecallItem
}

// RecallItem is an evicted round the recall search returned.
type RecallItem struct {
	Round  int
	Tokens int // what the round's text costs in the recall block
	// Similarity is the cosine similarity of the round to the newest user
	// message, the value MinSimilarity cuts at; Score is the fused score
	// the search ranked it by (mnemo.Hit.Score).
	Similarity float32
	Score      float64
	// Reason says why a dropped round was left out: ReasonBelowCutoff or
	// ReasonNoRoom. Empty for a recalled round.
	Reason string
}

// Why Context left out an evicted round the recall search returned.
const (
	ReasonBelowCutoff = "below MinSimilarity"
	ReasonNoRoom      = "does not fit in the budget"
)

// History returns every recorded message, chronologically, trimmed or
// not; the caller owns the returned slice. O(messages).
func (w *Window) History(ctx context.Context) ([]Message, error) {
	if err := w.mu.Lock(ctx); err != nil {
		return nil, err
	}
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	if err := w.resync(ctx); err != nil {
		return nil, err
	}
	out := make([]Message, len(w.msgs))
	for i, e := range w.msgs {
		out[i] = e.m.clone()
	}
	return out, nil
}

// Len returns the number of recorded messages.
func (w *Window) Len() int {
	w.mu.Lock(context.Background())
	defer w.mu.Unlock()
	return len(w.msgs)
}

// Clear removes every recorded message; a stored window removes them
// from its database too. It is SetMessages with none.
func (w *Window) Clear(ctx context.Context) error { return w.SetMessages(ctx, nil) }

// SetMessages replaces every recorded message with msgs (a message is
// protected when its Protected field is set), as if they had been
// recorded in order: they are validated as Record validates them, and
// nothing changes when one is rejected. A stored window replaces the
// stored messages atomically: a reopened session, after a crash at any
// point, holds the old messages or msgs, never a mix. It returns an error
// only when msgs were not stored; when removing the old messages after
// them failed, the window holds msgs and the removal is finished before
// the next message is stored, or at the next open. msgs is copied.
func (w *Window) SetMessages(ctx context.Context, msgs []Message) error {
	if err := w.mu.Lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.writable(ctx); err != nil {
		return err
	}
	calls := newToolCalls()
	entries := make([]entry, len(msgs))
	for i, m := range msgs {
		if err := check(m, calls); err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		calls.add(m)
		entries[i] = entry{m.clone(), m.Protected, w.counter(m)}
	}
	written, err := w.persistAll(ctx, entries)
	if !written {
		return err
	}
	w.msgs, w.calls, w.separated = entries, calls, false
	if w.recall {
		w.staleAll = true
		w.repair(ctx) // what fails stays stale: the messages are stored
	}
	return err
}

// round is a run of entries [start, end).
type round struct {
	start, end int
	tokens     int
	protected  bool
}

// keep picks the rounds of rs to keep within budget: the newest, the
// protected ones, then older ones newest-first while they fit. The caller
// holds w.mu.
func (w *Window) keep(rs []round, budget int) []bool {
	keep := make([]bool, len(rs))
	if len(rs) == 0 {
		return keep
	}
	last := len(rs) - 1
	keep[last] = true
	used := rs[last].tokens
	for i, r := range rs[:last] {
		if r.protected {
			keep[i] = true
			used += r.tokens
		}
	}
	for i := last - 1; i >= 0; i-- {
		if keep[i] {
			continue
		}
		if used+rs[i].tokens > budget {
			break
		}
		keep[i] = true
		used += rs[i].tokens
	}
	return keep
}

// render returns the messages of the kept rounds, chronologically, and
// records them in rep. The caller holds w.mu.
func (w *Window) render(rs []round, keep []bool, rep *Report) []Message {
	out := []Message{}
	rep.Kept = rep.Kept[:0]
	for i, r := range rs {
		if !keep[i] {
			continue
		}
		rep.Kept = append(rep.Kept, i)
		rep.Tokens += r.tokens
		for _, e := range w.msgs[r.start:r.end] {
			out = append(out, e.m.clone())
		}
	}
	return out
}

var _ Memory = (*Window)(nil)
