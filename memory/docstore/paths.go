package docstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/mnemodb/mnemo/memory/internal/docpath"
)

// folders returns the folders above a logical path, outermost first.
func folders(logical string) []string { return docpath.Folders(logical) }

func folderErr(logical string) error {
	return fmt.Errorf("%w: %s is a folder (documents are under it), not a document", ErrPathConflict, logical)
}

// checkWritable reports whether a document may be written at the path:
// not where a folder is, and not under a document (see Folders in the package doc). In
// a directory, an empty directory at the path is removed to make room.
// The caller holds d.mu.
func (d *Store) checkWritable(logical, rel string) error {
	if d.root == nil {
		for _, f := range folders(logical) {
			if _, ok := d.mem[f]; ok {
				return underDocErr(logical, f)
			}
		}
		if d.dirs[logical] > 0 {
			return folderErr(logical)
		}
		return nil
	}
	for _, f := range folders(logical) {
		fi, err := d.root.Stat(strings.TrimPrefix(f, "/"))
		if errors.Is(err, fs.ErrNotExist) {
			break // nor is anything under it
		}
		if err != nil {
			return fmt.Errorf("docstore: write %s: %v", logical, relErr(err))
		}
		if !fi.IsDir() {
			return underDocErr(logical, f)
		}
	}
	if fi, err := d.root.Stat(rel); err == nil && fi.IsDir() {
		if !d.emptyDir(rel) || d.root.Remove(rel) != nil {
			return folderErr(logical)
		}
	}
	return nil
}

func underDocErr(logical, doc string) error {
	return fmt.Errorf("%w: cannot write %s: %s is a document, not a folder", ErrPathConflict, logical, doc)
}

// emptyDir reports whether the directory rel holds no entries at all.
func (d *Store) emptyDir(rel string) bool {
	f, err := d.root.Open(path.Clean(rel))
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.ReadDir(1)
	return err == io.EOF
}

// pruneDirs removes dir and then each parent up to the root while they
// are empty, so that a folder goes with its last document on disk as it
// does in memory. The caller holds d.mu.
func (d *Store) pruneDirs(dir string) {
	for dir != "." && dir != "/" && d.root.Remove(dir) == nil {
		dir = path.Dir(dir)
	}
}

// warnSkipped logs that a file listings skip is not a document, when the
// store has a logger.
func (d *Store) warnSkipped(logical string, why error) {
	if d.log == nil {
		return
	}
	reason := "not UTF-8 text"
	if why != nil {
		reason = why.Error()
	}
	d.log.Warn("docstore: skipped a file that is not a document", "path", logical, "reason", reason)
}
