package docstore

import "errors"

// Errors, matched with errors.Is: those only a document store reports.
// Where the store.Store contract names an error, a Store returns package
// store's sentinel instead (see the package doc): Store reports empty or
// whitespace-only content with store.ErrEmpty and content that is not
// UTF-8 with store.ErrInvalid, and SearchSemantic a query with nothing to
// embed with store.ErrEmpty, the one sentinel for empty text.
var (
	// ErrInvalid reports a file or text that is not UTF-8, an empty text
	// to replace in Edit, a semantic search on a store opened without
	// Options.Semantic, and an unusable option.
	ErrInvalid = errors.New("docstore: invalid input")
	// ErrTooLarge reports a document over the size limit.
	ErrTooLarge = errors.New("docstore: document too large")
	// ErrBadPath reports a path that is malformed or would leave the
	// store's root (see Paths in the package doc).
	ErrBadPath = errors.New("docstore: bad path")
	// ErrNotRegular reports a path in the directory that names something
	// other than a regular file: a directory, a named pipe, a device or a
	// socket. The store never opens such an entry for reading.
	ErrNotRegular = errors.New("docstore: not a regular file")
	// ErrPathConflict reports a path that collides with the folder tree:
	// writing a document where a folder is (a path other documents sit
	// under), writing under a document as if it were a folder, and
	// reading, editing or deleting a folder. The in-memory store and a
	// directory report the same collisions.
	ErrPathConflict = errors.New("docstore: path conflicts with a document or folder")
	// ErrNotFound reports a document that does not exist.
	ErrNotFound = errors.New("docstore: no such document")
	// ErrNoMatch reports an Edit whose old text does not occur.
	ErrNoMatch = errors.New("docstore: text to replace not found")
	// ErrAmbiguous reports an Edit whose old text occurs more than once.
	ErrAmbiguous = errors.New("docstore: text to replace occurs more than once")
)
