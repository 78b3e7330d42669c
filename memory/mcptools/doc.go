// Package mcptools serves mnemo's agent memories as tools of an MCP
// (Model Context Protocol) server, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk/mcp): the same tools the
// command "mnemo mcp" serves, for an application to mount on its own
// server beside its own tools.
//
//	tools, err := mcptools.New(ctx, db, nil) // db: engine.DB.Store(), or a postgres.Store
//	defer tools.Close()
//	tools.Register(server)                    // server: an *mcp.Server
//
// New builds on a database the caller owns and leaves it open (Close
// waits for the calls in flight, then refuses new ones); the memories
// live in collections of that database, named as the adapters name them
// by default, so the application, using the adapters, and the model,
// using the tools, share one memory.
//
// # Tools
//
//	facts (store.Semantic, collection "memories")
//	  facts_remember       fact                        -> id
//	  facts_recall         query, limit                -> facts with their distances, best first
//	  facts_forget         fact (exact text)           -> how many were deleted
//	  facts_list           offset, limit               -> facts, oldest first, and the total
//	tool usage (toolmem.Memory, collections "toolmem.tools", "toolmem.texts")
//	  tool_usage_store     question, tool_name, tool_args, result_summary -> id
//	  tool_usage_retrieve  question, top_k, threshold  -> entries, most similar first
//	documents (collection "documents"; Anthropic's memory tool's commands and arguments)
//	  documents_view       path, view_range            -> the text with line numbers, or a folder listing
//	  documents_create     path, file_text, overwrite  -> confirmation
//	  documents_str_replace path, old_str, new_str     -> the edited lines
//	  documents_insert     path, insert_line, insert_text -> confirmation
//	  documents_delete     path (document or folder)   -> confirmation
//	  documents_rename     old_path, new_path          -> confirmation
//	  documents_search     query, limit                -> paths, scores and matching line numbers
//	conversation history (window.NewStored's sessions, read without opening them)
//	  history_sessions     -                           -> the stored sessions
//	  history_search       query, session, limit       -> messages, best match first
//	  history_read         session, from, count        -> messages in order, and the total
//
// Facts, tool usage and history answer with structured content (and its
// JSON text); documents answer in text, as the memory tool does.
//
// # Documents
//
// A document is a record of the documents collection: its ID the logical
// path, its content the text. Paths follow package docstore's rules
// ("/memories/notes.md"; no "..", no dot names, no backslashes, control
// characters or percent-encoded separators), and a bad one is
// docstore.ErrBadPath; they are at most 512 bytes (mnemo.MaxIDLength).
// Folders are implicit: a folder exists while a document is under it, and
// a path cannot be both (docstore.ErrPathConflict). The collection keeps
// no embedding; documents_search ranks by words (BM25), and its line
// numbers are those of lines that hold a query word. Edits are
// read-modify-write under a lock that spans processes on a server
// (mnemo.TryLock), so concurrent edits of one document never lose one.
// A folder rename writes the moved documents, then deletes the old ones:
// a failure between leaves both, never neither.
//
// # Errors
//
// Every failure of a call, bad arguments included, comes back as a tool
// error: a result with IsError set whose text says what was wrong and,
// where it helps, what to do ("... (documents_view the document and copy
// the text exactly ...)"). Arguments that do not match a tool's input
// schema are refused by the SDK with the schema's complaint, also as a
// tool error. A panic in a tool is a tool error too, reported as a bug.
// Only an unknown tool name is a protocol error (the SDK's).
//
// # Limits
//
// A document is at most Options.MaxDocumentSize bytes (100 KiB by
// default, docstore's); every other text argument (a fact, a question, a
// query, a result summary, tool_args as JSON) at most Options.MaxTextSize
// (16 KiB). Results are bounded too: MaxResults hits per search,
// MaxListed facts or folder entries per page, MaxViewBytes of a document
// per view, MaxHistoryRead messages per read, each cut to MaxMessageBytes.
// The transport bounds a whole message: see the server that mounts the
// tools (mnemo mcp reads at most 16 MiB).
//
// # Concurrency
//
// Tools are safe for concurrent use by multiple goroutines; an MCP
// server runs calls concurrently. Register may be called for several
// servers. Reading the history takes no session lock, so it runs while
// the agent's window records the session; it sees each message as last
// stored.
package mcptools
