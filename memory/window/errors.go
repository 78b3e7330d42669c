package window

import "errors"

// Errors, matched with errors.Is. A window with recall opened on rounds
// embedded by another embedder fails with an error wrapping
// embed.ErrMismatch.
var (
	// ErrInvalid reports a malformed message (unknown role, tool calls on a
	// non-assistant message, a tool message without a call ID, a call
	// without an ID, two calls with one ID in a message, a second result
	// for a call).
	ErrInvalid = errors.New("window: invalid message")
	// ErrUnknownToolCall reports a tool result whose call ID matches no
	// earlier assistant tool call.
	ErrUnknownToolCall = errors.New("window: tool result for an unknown tool call")
	// ErrSeparatedToolResult reports a tool result that would not directly
	// follow the assistant message that made its call: another message (a
	// user message, say) was recorded after the call. Chat APIs refuse
	// such a context.
	ErrSeparatedToolResult = errors.New("window: tool result separated from its call")
	// ErrUnansweredToolCalls reports a message other than a tool result
	// recorded while tool calls of the last assistant message have no
	// result yet. Chat APIs refuse such a context.
	ErrUnansweredToolCalls = errors.New("window: tool calls without results")
	// ErrSessionOpen reports a NewStored of a session that is already open on
	// the same database in this process (until that window is closed).
	ErrSessionOpen = errors.New("window: session already open")
	// ErrSessionLost reports a write to a stored window whose session
	// lock was lost (on a server, the connection that held it ended):
	// another window may have taken the session since, so this one
	// writes nothing more. Close it and open the session again.
	ErrSessionLost = errors.New("window: session lock lost")
	// ErrRecall wraps a failure of recall in Context (the embedder or the
	// recall index failed); Context then returns the window without the
	// recalled rounds, which is usable as it is, with the error.
	ErrRecall = errors.New("window: recall failed")
	// ErrNoSession reports a session that ReadStored or SearchStored
	// cannot find: no stored window made it in the database.
	ErrNoSession = errors.New("window: no such stored session")
	// ErrClosed reports a call on a window after its Close.
	ErrClosed = errors.New("window: closed")
)
