// Package docstore keeps path-addressed text documents ("/preferences.md",
// "/proj/plan.md") in a directory, or in memory, with read, write,
// unique-match edit, listing and full-text search, and optionally search
// by meaning: the Go form of aimu's DocumentStore. All file access goes
// through an os.Root, so no path, however spelt and whatever symlinks the
// directory holds, reaches outside it.
//
//	docs, err := docstore.Open(dir, nil) // "" keeps the documents in memory
//	err = docs.Write(ctx, "/preferences.md", "Use concise responses.")
//	err = docs.Edit(ctx, "/preferences.md", "concise", "detailed")
//	found, err := docs.SearchFullText(ctx, "detailed", 10)
//
// # One contract with the fact store
//
// [Store] satisfies store.Store (package
// github.com/mnemodb/mnemo/memory/store), as that package's fact store,
// store.Semantic, does, so an agent can swap one for the other: Store
// writes a new document, Search is a full-text search returning contents,
// Delete takes a path and ListAll lists the paths. Where that contract
// names an error, a Store returns package store's sentinel, so code
// written against store.Store matches errors the same way whichever
// memory it holds: Store refuses empty or whitespace-only content with
// store.ErrEmpty and content that is not UTF-8 with store.ErrInvalid.
// Everything else is reported with this package's sentinels.
//
// # Paths
//
// Paths are logical: "foo.md" and "/foo.md" name the same document, which
// lives at <dir>/foo.md. A path is rejected (ErrBadPath) if it is empty,
// ends with "/" (that names a folder), has a ".." segment, a
// percent-encoded dot, slash or backslash, a backslash, a NUL or other
// control character, a drive letter, or a segment starting with a dot.
// Errors name logical paths only, never host paths.
//
// # Folders
//
// A path's leading segments are its folders: "/proj/a.md" is the document
// a.md in the folder /proj. A folder exists while a document is under it,
// and one path cannot be both: writing "/proj" while "/proj/a.md" exists,
// writing "/proj/a.md" while "/proj" is a document, and reading, editing
// or deleting "/proj" while it is a folder all fail with ErrPathConflict,
// naming the path that is in the way. The same rule holds in memory and
// in a directory: there Delete removes the directories its last document
// leaves empty, and an empty directory counts as absent (a document
// written at its path replaces it).
//
// # Sizes
//
// MaxSize (100 KiB by default) limits what is written: Write refuses
// larger content, and Edit refuses a result larger than MaxSize unless it
// is no larger than the document was, so a larger document copied in by
// hand can still be read and edited down. Reads are limited by
// MaxReadSize (1 MiB by default), so a huge file costs no more than that
// to refuse.
//
// # Text
//
// Write takes any UTF-8 content, empty included; Store, like every
// store.Store, refuses empty or whitespace-only content. Full-text search
// is a substring search, as in the original: an empty query matches every
// document. An empty or whitespace-only query to SearchSemantic finds no
// documents, with no error.
//
// A Store is safe for concurrent use by multiple goroutines.
package docstore
