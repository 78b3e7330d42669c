package window

import "errors"

// Errors, matched with errors.Is. A window with recall opened on rounds
// embedded by another embedder fails with an error wrapping
// embed.ErrMismatch.
var (
	// ErrInvalid reports a malformed message (unknown role, tool calls on a
	// non-assistant message, a tool message without a call ID, a call
	// without an ID).
	ErrInvalid = errors.New("window: invalid message")
	// ErrUnknownToolCall reports a tool result whose call ID matches no
	// earlier assistant tool call.
	ErrUnknownToolCall = errors.New("window: tool result for an unknown tool call")
	// ErrSessionOpen reports a NewStored of a session that is already open on
	// the same database in this process (until that window is closed).
	ErrSessionOpen = errors.New("window: session already open")
	// ErrClosed reports a call on a window after its Close.
	ErrClosed = errors.New("window: closed")
)
