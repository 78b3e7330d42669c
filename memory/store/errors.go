package store

import "errors"

// Errors, matched with errors.Is. A Semantic store opened with another
// embedder than the one its vectors were made with fails with an error
// wrapping embed.ErrMismatch.
var (
	// ErrEmpty reports empty or whitespace-only content given to Store or
	// Add (see Text in the package doc).
	ErrEmpty = errors.New("store: empty text")
	// ErrInvalid reports invalid UTF-8 or an unusable option.
	ErrInvalid = errors.New("store: invalid input")
	// ErrTooLarge reports a document over the size limit.
	ErrTooLarge = errors.New("store: document too large")
	// ErrBadPath reports a path that is malformed or would leave the
	// store's root.
	ErrBadPath = errors.New("store: bad path")
	// ErrNotRegular reports a path in the directory that names something
	// other than a regular file: a directory, a named pipe, a device or a
	// socket. The store never opens such an entry for reading.
	ErrNotRegular = errors.New("store: not a regular file")
	// ErrPathConflict reports a path that collides with the folder tree:
	// writing a document where a folder is (a path other documents sit
	// under), writing under a document as if it were a folder, and
	// reading, editing or deleting a folder. The in-memory store and a
	// directory report the same collisions.
	ErrPathConflict = errors.New("store: path conflicts with a document or folder")
	// ErrNotFound reports a document that does not exist.
	ErrNotFound = errors.New("store: no such document")
	// ErrNoMatch reports an Edit whose old text does not occur.
	ErrNoMatch = errors.New("store: text to replace not found")
	// ErrAmbiguous reports an Edit whose old text occurs more than once.
	ErrAmbiguous = errors.New("store: text to replace occurs more than once")
)
