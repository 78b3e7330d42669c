package mcptools

import "errors"

// Errors, matched with errors.Is. A tool call reports every error as a
// tool error (a result with IsError set) whose text is the error's
// message with a hint on what to do; these sentinels are what the Go API
// and the tools report beyond the adapters' own (docstore's ErrBadPath,
// ErrNotFound, ErrPathConflict, ErrNoMatch, ErrAmbiguous and
// ErrTooLarge for documents; store's, toolmem's and window's for facts,
// tool usage and history).
var (
	// ErrInvalid reports unusable Options, and a tool argument that is
	// out of range (a negative limit, a line number past the end).
	ErrInvalid = errors.New("mcptools: invalid input")
	// ErrTooLarge reports a tool argument over its limit (see Limits in
	// the package doc).
	ErrTooLarge = errors.New("mcptools: argument too large")
	// ErrExists reports a document created or renamed onto a path that
	// is taken.
	ErrExists = errors.New("mcptools: document already exists")
)
