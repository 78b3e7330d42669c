package docstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/docpath"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/metrics"
)

// Store is a path-addressed store of text documents (see the package doc
// for the rules on paths, folders and sizes). With a directory the
// directory is the single source of truth: every call reads it, so files
// copied in by hand appear at once. Entries that are not documents are
// skipped by listings and searches (UnreadablePaths lists them, and
// Options.Logger, when set, warns of each) and Read reports why: files
// that are not UTF-8 text (ErrInvalid) or larger than MaxReadSize
// (ErrTooLarge), and anything but a regular file, such as a named pipe, a
// device or a socket (ErrNotRegular), which is never opened in a way that
// could wait. Names starting with a dot are ignored. Without a directory
// the documents live in memory.
//
// A Store is safe for concurrent use by multiple goroutines. With a
// directory, reads take no lock: every write is an atomic rename, so a
// reader sees a document whole, as it was before or after, and a slow
// read never holds up writes.
type Store struct {
	root    *os.Root     // nil in memory
	maxSize int          // the most bytes a write may leave in a document
	readMax int          // the most bytes a read may return
	index   *docIndex    // nil unless Options.Semantic
	log     *slog.Logger // nil: no warnings

	// mu serialises changes: Write, Edit (a read-modify-write) and Delete
	// hold it exclusively. In memory it also guards mem and dirs, which
	// readers hold it shared for; with a directory readers do not take it.
	mu   sync.RWMutex
	mem  map[string]string
	dirs map[string]int // in memory: folder -> documents under it
}

// Options configure a Store; nil means the defaults, and a zero field its
// default. Open reads opts once and keeps no reference to it, so the
// caller may reuse it; an Options is not safe to change while another
// goroutine passes it to Open.
type Options struct {
	// MaxSize is the largest document a write may leave, in bytes;
	// default DefaultMaxSize (100 KiB).
	MaxSize int
	// MaxReadSize is the largest file a read accepts, in bytes; default
	// DefaultMaxReadSize (1 MiB), or MaxSize when that is larger. It may
	// not be below MaxSize.
	MaxReadSize int
	// Logger, when set, receives a warning for each file in the directory
	// that listings and searches skip (see UnreadablePaths), as the
	// original warns; nil means silent.
	Logger *slog.Logger
	// Semantic enables SearchSemantic, an embedding index of the documents
	// kept in an in-memory engine database and synced with the documents
	// on every semantic search. Embedder defaults to the offline one.
	Semantic bool
	Embedder embed.Embedder
	// Metrics, when set, receives an embed event for every embedding of
	// the semantic index and the events of its in-memory engine
	// database (see package metrics). Default nil: off.
	Metrics metrics.Recorder
}

// Default size limits (see Sizes in the package doc).
const (
	DefaultMaxSize     = 100 << 10
	DefaultMaxReadSize = 1 << 20
)

// Document is a document a search returned: its logical path and its
// content. It is a plain value, safe to copy and to read from any
// goroutine.
type Document struct {
	Path    string
	Content string
}

// Open opens the document store rooted at dir (created if missing); an
// empty dir keeps the documents in memory. opts may be nil. A negative
// MaxSize, or a MaxReadSize below MaxSize, is ErrInvalid. Close releases
// the directory.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.MaxSize < 0 {
		return nil, fmt.Errorf("%w: MaxSize %d", ErrInvalid, o.MaxSize)
	}
	if o.MaxReadSize == 0 {
		o.MaxReadSize = max(DefaultMaxReadSize, o.MaxSize)
	}
	if o.MaxReadSize < o.MaxSize {
		return nil, fmt.Errorf("%w: MaxReadSize %d is below MaxSize %d", ErrInvalid, o.MaxReadSize, o.MaxSize)
	}
	d := &Store{maxSize: o.MaxSize, readMax: o.MaxReadSize, log: o.Logger}
	if dir == "" {
		d.mem, d.dirs = make(map[string]string), make(map[string]int)
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("docstore: create the document directory: %w", err)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, fmt.Errorf("docstore: open the document directory: %w", err)
		}
		d.root = root
	}
	if o.Semantic {
		idx, err := newDocIndex(o.Embedder, textvec.Observe{Logger: o.Logger, Metrics: o.Metrics})
		if err != nil {
			d.Close()
			return nil, err
		}
		d.index = idx
	}
	return d, nil
}

// Close releases the directory and the semantic index.
func (d *Store) Close() error {
	var errs []error
	if d.index != nil {
		errs = append(errs, d.index.db.Close())
	}
	if d.root != nil {
		errs = append(errs, d.root.Close())
	}
	return errors.Join(errs...)
}

// cleanPath validates a logical path and returns it in canonical form
// ("/a/b.md") and relative to the root ("a/b.md"); see Paths in the
// package doc.
func cleanPath(p string) (logical, rel string, err error) { return docpath.Clean(p, ErrBadPath) }

func (d *Store) checkContent(content string) error {
	if !utf8.ValidString(content) {
		return fmt.Errorf("%w: content is not valid UTF-8", ErrInvalid)
	}
	if len(content) > d.maxSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(content), d.maxSize)
	}
	return nil
}

// Write creates or replaces the document at p. On disk the write is
// atomic: a temporary file in the same directory, synced, then renamed.
func (d *Store) Write(ctx context.Context, p, content string) error {
	logical, rel, err := cleanPath(p)
	if err != nil {
		return err
	}
	if err := d.checkContent(content); err != nil {
		return fmt.Errorf("write %s: %w", logical, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.write(logical, rel, content)
}

func (d *Store) write(logical, rel, content string) error {
	if err := d.checkWritable(logical, rel); err != nil {
		return err
	}
	if d.root == nil {
		if _, ok := d.mem[logical]; !ok {
			for _, f := range folders(logical) {
				d.dirs[f]++
			}
		}
		d.mem[logical] = content
		return nil
	}
	if dir := path.Dir(rel); dir != "." {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("docstore: write %s: %v", logical, relErr(err))
		}
	}
	tmp := path.Join(path.Dir(rel), ".tmp-"+uuid.NewString())
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("docstore: write %s: %v", logical, relErr(err))
	}
	_, err = f.WriteString(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.root.Rename(tmp, rel)
	}
	if err != nil {
		d.root.Remove(tmp)
		return fmt.Errorf("docstore: write %s: %v", logical, relErr(err))
	}
	return nil
}

// relErr strips an error down to its operation and cause, so no host path
// appears in messages.
func relErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %v", le.Op, le.Err)
	}
	return err
}

// Read returns the document at p. It fails with ErrNotFound when there is
// none, ErrPathConflict when p is a folder, ErrNotRegular when p names a
// named pipe or another entry that is not a regular file, ErrTooLarge
// when the file is larger than MaxReadSize, and ErrInvalid when it is not
// UTF-8 text.
func (d *Store) Read(ctx context.Context, p string) (string, error) {
	logical, rel, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	if d.root == nil {
		d.mu.RLock()
		defer d.mu.RUnlock()
	}
	return d.read(logical, rel)
}

// read returns a document. In memory the caller holds d.mu.
func (d *Store) read(logical, rel string) (string, error) {
	if d.root == nil {
		c, ok := d.mem[logical]
		switch {
		case ok:
			return c, nil
		case d.dirs[logical] > 0:
			return "", folderErr(logical)
		}
		return "", fmt.Errorf("%w: %s", ErrNotFound, logical)
	}
	b, err := d.readFile(logical, rel)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%w: %s is not UTF-8 text", ErrInvalid, logical)
	}
	return string(b), nil
}

// readFile returns the bytes of the regular file at rel. It opens nothing
// but a regular file and never waits on an entry that is not one: the
// entry's mode is checked before the open, the open does not block (on a
// named pipe without a writer it would), and the opened file's mode is
// checked again in case the entry was replaced in between. It reads at
// most MaxReadSize+1 bytes, so rejecting a file over the limit, even a
// sparse one of many gigabytes, costs no more than the limit.
func (d *Store) readFile(logical, rel string) ([]byte, error) {
	fi, err := d.root.Stat(rel)
	if err != nil {
		return nil, readErr(logical, err)
	}
	if fi.IsDir() {
		if d.emptyDir(rel) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, logical)
		}
		return nil, folderErr(logical)
	}
	if err := d.checkFile(logical, fi); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(rel, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, readErr(logical, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, readErr(logical, err)
	}
	if err := d.checkFile(logical, fi); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(d.readMax)+1))
	if err != nil {
		return nil, readErr(logical, err)
	}
	if len(b) > d.readMax {
		return nil, fmt.Errorf("%w: %s is over the read limit of %d bytes", ErrTooLarge, logical, d.readMax)
	}
	return b, nil
}

// checkFile accepts a regular file of at most MaxReadSize bytes.
func (d *Store) checkFile(logical string, fi fs.FileInfo) error {
	if m := fi.Mode(); !m.IsRegular() {
		return fmt.Errorf("%w: %s is %s", ErrNotRegular, logical, fileKind(m))
	}
	if fi.Size() > int64(d.readMax) {
		return fmt.Errorf("%w: %s is %d bytes, read limit %d", ErrTooLarge, logical, fi.Size(), d.readMax)
	}
	return nil
}

// fileKind names the type of a file that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return fmt.Sprintf("not a regular file (mode %v)", m)
}

// readErr reports a failed read of a document without naming host paths.
func readErr(logical string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) { // ENOTDIR: under a document
		return fmt.Errorf("%w: %s", ErrNotFound, logical)
	}
	return fmt.Errorf("docstore: read %s: %v", logical, relErr(err))
}

// Edit replaces the one occurrence of old with new in the document at p.
// Zero occurrences (ErrNoMatch) and several (ErrAmbiguous) are errors, and
// then nothing is written; so are the errors of Read, a result that is not
// valid UTF-8 (ErrInvalid: an invalid new text, or an old one matching
// part of a character), and a result over MaxSize that is larger than
// the document was (ErrTooLarge). Edit holds
// the store's write lock while it reads the document, which is a regular
// file of at most MaxReadSize bytes.
func (d *Store) Edit(ctx context.Context, p, old, new string) error {
	logical, rel, err := cleanPath(p)
	if err != nil {
		return err
	}
	if old == "" {
		return fmt.Errorf("%w: edit %s: the text to replace is empty", ErrInvalid, logical)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	content, err := d.read(logical, rel)
	if err != nil {
		return err
	}
	switch n := strings.Count(content, old); {
	case n == 0:
		return fmt.Errorf("%w: in %s", ErrNoMatch, logical)
	case n > 1:
		return fmt.Errorf("%w: %d times in %s; include more surrounding text", ErrAmbiguous, n, logical)
	}
	updated := strings.Replace(content, old, new, 1)
	if !utf8.ValidString(updated) {
		// An invalid new text, or an old one that matched part of a
		// character ("\xa9" inside "é"): what Write would refuse.
		return fmt.Errorf("%w: edit %s: the result is not valid UTF-8", ErrInvalid, logical)
	}
	if len(updated) > d.maxSize && len(updated) > len(content) {
		return fmt.Errorf("edit %s: %w: the result is %d bytes, limit %d (a larger document may only shrink)",
			logical, ErrTooLarge, len(updated), d.maxSize)
	}
	return d.write(logical, rel, updated)
}

// scan lists the documents (logical path -> content) and the entries that
// are not documents (see Store). Dot names are skipped. The caller
// owns the returned map; scan takes d.mu itself, in memory only.
func (d *Store) scan() (docs map[string]string, unreadable []string, err error) {
	if d.root == nil {
		d.mu.RLock()
		defer d.mu.RUnlock()
		return maps.Clone(d.mem), nil, nil
	}
	docs = map[string]string{}
	err = fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			return nil
		}
		b, rerr := d.readFile("/"+p, p)
		switch {
		case errors.Is(rerr, ErrNotFound): // removed since it was listed
			return nil
		case rerr != nil || !utf8.Valid(b): // not a document, or out of the root
			unreadable = append(unreadable, "/"+p)
			d.warnSkipped("/"+p, rerr)
			return nil
		}
		docs["/"+p] = string(b)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("docstore: list documents: %v", relErr(err))
	}
	slices.Sort(unreadable)
	return docs, unreadable, nil
}

// ListPaths returns the sorted paths of all documents starting with prefix
// ("" for all; "notes" and "/notes" are the same prefix).
func (d *Store) ListPaths(ctx context.Context, prefix string) ([]string, error) {
	docs, _, err := d.scan()
	if err != nil {
		return nil, err
	}
	if prefix != "" && !strings.HasPrefix(prefix, "/") {
		prefix = "/" + prefix
	}
	var out []string
	for p := range docs {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// SearchFullText returns up to n documents whose content contains query,
// ignoring case, ordered by path (n <= 0 means store.DefaultResults). As in the
// original, query is a plain substring: "" is in every document, so it
// returns the first n, and whitespace or symbols match where they occur.
func (d *Store) SearchFullText(ctx context.Context, query string, n int) ([]Document, error) {
	if n <= 0 {
		n = store.DefaultResults
	}
	docs, _, err := d.scan()
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(query)
	var out []Document
	for p, c := range docs {
		if strings.Contains(strings.ToLower(c), q) {
			out = append(out, Document{p, c})
		}
	}
	slices.SortFunc(out, func(a, b Document) int { return strings.Compare(a.Path, b.Path) })
	return out[:min(n, len(out))], nil
}

// UnreadablePaths returns the sorted paths of the entries in the directory
// that listings and searches skip: files that are not UTF-8 text or are
// larger than MaxReadSize, entries that are not regular files (named pipes,
// devices, sockets) and files that cannot be read (such as a symlink
// leading out of the directory); empty in memory.
func (d *Store) UnreadablePaths(ctx context.Context) ([]string, error) {
	_, bad, err := d.scan()
	return bad, err
}

// Store writes content to a new document /note-<uuid>.md. As every
// store.Store, it refuses empty or whitespace-only content with
// store.ErrEmpty and content that is not UTF-8 with store.ErrInvalid;
// content over MaxSize is ErrTooLarge.
func (d *Store) Store(ctx context.Context, content string) error {
	if strings.TrimSpace(content) == "" {
		return fmt.Errorf("%w: content is empty", store.ErrEmpty)
	}
	if !utf8.ValidString(content) {
		return fmt.Errorf("%w: content is not valid UTF-8", store.ErrInvalid)
	}
	return d.Write(ctx, "/note-"+uuid.NewString()+".md", content)
}

// Search returns the contents of up to n documents containing query.
func (d *Store) Search(ctx context.Context, query string, n int) ([]string, error) {
	docs, err := d.SearchFullText(ctx, query, n)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(docs))
	for i, doc := range docs {
		out[i] = doc.Content
	}
	return out, nil
}

// Delete removes the document at identifier (a path); absent is a no-op,
// a malformed path ErrBadPath and a folder ErrPathConflict.
func (d *Store) Delete(ctx context.Context, identifier string) error {
	logical, rel, err := cleanPath(identifier)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root == nil {
		if _, ok := d.mem[logical]; ok {
			delete(d.mem, logical)
			for _, f := range folders(logical) {
				if d.dirs[f]--; d.dirs[f] == 0 {
					delete(d.dirs, f)
				}
			}
		} else if d.dirs[logical] > 0 {
			return folderErr(logical)
		}
		return nil
	}
	if fi, err := d.root.Stat(rel); err == nil && fi.IsDir() && !d.emptyDir(rel) {
		return folderErr(logical)
	}
	err = d.root.Remove(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("docstore: delete %s: %v", logical, relErr(err))
	}
	if err == nil {
		d.pruneDirs(path.Dir(rel))
	}
	return nil
}

// ListAll returns every document path, sorted.
func (d *Store) ListAll(ctx context.Context) ([]string, error) { return d.ListPaths(ctx, "") }

var _ store.Store = (*Store)(nil)
