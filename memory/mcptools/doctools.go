package mcptools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo/memory/docstore"
)

// The document tools, in the shape of Anthropic's memory tool (view,
// create, str_replace, insert, delete, rename: the same arguments, and
// text answers), plus search.

type docViewIn struct {
	Path      string `json:"path" jsonschema:"a document ('/notes/todo.md') or a folder ('/notes', or '/' for all)"`
	ViewRange []int  `json:"view_range,omitempty" jsonschema:"optional [first, last] line numbers to show, from 1; last -1 means to the end"`
}

type docCreateIn struct {
	Path      string `json:"path" jsonschema:"where to create the document, such as '/memories/project.md'; folders are made as needed"`
	FileText  string `json:"file_text" jsonschema:"the document's text"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace the document if one is at path; default false, which refuses"`
}

type docStrReplaceIn struct {
	Path   string `json:"path" jsonschema:"the document to edit"`
	OldStr string `json:"old_str" jsonschema:"the exact text to replace; it must occur exactly once in the document, whitespace included"`
	NewStr string `json:"new_str" jsonschema:"the text to put in its place (empty deletes it)"`
}

type docInsertIn struct {
	Path       string `json:"path" jsonschema:"the document to edit"`
	InsertLine int    `json:"insert_line" jsonschema:"the line number after which to insert, from 0 (before the first line) to the number of lines"`
	InsertText string `json:"insert_text" jsonschema:"the text to insert, as one or more lines"`
}

type docDeleteIn struct {
	Path string `json:"path" jsonschema:"the document, or folder (with every document under it), to delete"`
}

type docRenameIn struct {
	OldPath string `json:"old_path" jsonschema:"the document or folder to move"`
	NewPath string `json:"new_path" jsonschema:"its new path, which must not exist"`
}

type docSearchIn struct {
	Query string `json:"query" jsonschema:"words to look for"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many documents at most; default 10"`
}

func (t *Tools) registerDocuments(s *mcp.Server) {
	size := t.docs.maxSize
	addText(t, s, &mcp.Tool{
		Name: "documents_view",
		Description: "Show a document with line numbers, or list a folder's documents and folders two levels deep with their sizes ('/' lists everything). " +
			"Documents are text memory files addressed by paths such as /memories/notes.md; start a task by viewing '/' or your memory folder. " +
			fmt.Sprintf("Shows at most %d KiB of a document at once: use view_range for the rest.", MaxViewBytes>>10),
		Annotations: annotate(readOnly, "View a document or folder"),
	}, t.docView)
	addText(t, s, &mcp.Tool{
		Name: "documents_create",
		Description: fmt.Sprintf("Create a document with the given text (folders are implicit). Fails if a document is already at path, unless overwrite is true. "+
			"A path is /-separated segments of letters, digits and punctuation, none starting with a dot; at most 512 bytes. A document is at most %d bytes.", size),
		Annotations: annotate(destructive, "Create a document"),
	}, t.docCreate)
	addText(t, s, &mcp.Tool{
		Name: "documents_str_replace",
		Description: fmt.Sprintf("Replace text in a document: old_str must occur exactly once (include surrounding lines to make it unique). "+
			"Answers with the edited lines. The result may be at most %d bytes.", size),
		Annotations: annotate(destructive, "Replace text in a document"),
	}, t.docStrReplace)
	addText(t, s, &mcp.Tool{
		Name:        "documents_insert",
		Description: fmt.Sprintf("Insert lines into a document after line insert_line (0 inserts at the top). The result may be at most %d bytes.", size),
		Annotations: annotate(destructive, "Insert lines into a document"),
	}, t.docInsert)
	addText(t, s, &mcp.Tool{
		Name:        "documents_delete",
		Description: "Delete a document, or a folder and every document under it.",
		Annotations: annotate(destructive, "Delete a document or folder"),
	}, t.docDelete)
	addText(t, s, &mcp.Tool{
		Name:        "documents_rename",
		Description: "Move a document or a folder (with everything under it) to a new path, which must not exist.",
		Annotations: annotate(destructive, "Rename a document or folder"),
	}, t.docRename)
	addText(t, s, &mcp.Tool{
		Name: "documents_search",
		Description: fmt.Sprintf("Find the documents that best match some words (ranked by BM25 over their text: words, not meaning), "+
			"with the numbers of the lines that hold them. Returns at most %d documents.", MaxResults),
		Annotations: annotate(readOnly, "Search documents"),
	}, t.docSearch)
}

// numbered renders lines (the first numbered first) as documents_view
// shows them: six-column right-aligned numbers, a tab, the line. It stops
// before MaxViewBytes and returns the number of the last line shown.
func numbered(lines []string, first int) (string, int) {
	var b strings.Builder
	last := first - 1
	for i, line := range lines {
		n := first + i
		if len(line) > MaxViewBytes/2 { // a line this long comes from another program
			cut := MaxViewBytes / 2
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut] + fmt.Sprintf(" ... (%d more bytes on this line)", len(line)-cut)
		}
		s := fmt.Sprintf("%6d\t%s\n", n, line)
		if b.Len()+len(s) > MaxViewBytes && i > 0 {
			break
		}
		b.WriteString(s)
		last = n
	}
	return strings.TrimSuffix(b.String(), "\n"), last
}

func (t *Tools) docView(ctx context.Context, in docViewIn) (string, error) {
	folder, err := cleanFolder(in.Path)
	if err != nil {
		return "", err
	}
	if folder != "" {
		content, ok, err := t.docs.get(ctx, folder)
		if err != nil {
			return "", err
		}
		if ok {
			return viewDocument(folder, content, in.ViewRange)
		}
	}
	listing, err := t.listFolder(ctx, folder)
	if err == nil && in.ViewRange != nil {
		return "", fmt.Errorf("%w: view_range: %s is a folder, not a document", ErrInvalid, displayFolder(folder))
	}
	return listing, err
}

func displayFolder(folder string) string {
	if folder == "" {
		return "/"
	}
	return folder
}

// viewDocument renders a document with line numbers, all of it or the
// lines in r.
func viewDocument(path, content string, r []int) (string, error) {
	lines := strings.Split(content, "\n")
	first, last := 1, len(lines)
	if r != nil {
		if len(r) != 2 {
			return "", fmt.Errorf("%w: view_range has %d numbers, want two: [first, last]", ErrInvalid, len(r))
		}
		first, last = r[0], r[1]
		if last == -1 {
			last = len(lines)
		}
		if first < 1 || first > len(lines) || last < first || last > len(lines) {
			return "", fmt.Errorf("%w: view_range [%d, %d]: %s has lines 1 to %d", ErrInvalid, r[0], r[1], path, len(lines))
		}
	}
	body, shown := numbered(lines[first-1:last], first)
	out := fmt.Sprintf("Here's the content of %s with line numbers:\n%s", path, body)
	if shown < last {
		out += fmt.Sprintf("\n(lines %d to %d of %d shown, the most one view shows; view_range [%d, %d] shows the next)",
			first, shown, len(lines), shown+1, last)
	}
	return out, nil
}

// listFolder lists a folder two levels deep: its documents and folders,
// and theirs, with sizes (a folder's is what its documents hold).
func (t *Tools) listFolder(ctx context.Context, folder string) (string, error) {
	type item struct {
		path string
		size int
	}
	var items []item
	index := map[string]int{} // folder path -> its item
	total, count, cut := 0, 0, false
	err := t.docs.under(ctx, folder, func(e entry) bool {
		count++
		total += e.size
		rest := strings.Split(strings.TrimPrefix(e.path, folder+"/"), "/")
		p := folder
		for depth, seg := range rest {
			p += "/" + seg
			isDoc := depth == len(rest)-1
			if depth >= 2 {
				break
			}
			if i, ok := index[p]; ok && !isDoc {
				items[i].size += e.size
				continue
			}
			if len(items) == MaxListed {
				cut = true
				continue
			}
			if !isDoc {
				index[p] = len(items)
			}
			items = append(items, item{path: p, size: e.size})
		}
		return true
	})
	if err != nil {
		return "", err
	}
	shown := displayFolder(folder)
	if count == 0 {
		if folder == "" {
			return "There are no documents yet: " + t.name("documents_create") + " makes one.", nil
		}
		return "", notFound(folder)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the documents and folders up to 2 levels deep in %s (%s in all):\n%s\t%s", shown, plural(count, "document"), size(total), shown)
	for _, it := range items {
		name := it.path
		if _, ok := index[it.path]; ok {
			name += "/"
		}
		fmt.Fprintf(&b, "\n%s\t%s", size(it.size), name)
	}
	if cut {
		fmt.Fprintf(&b, "\n(the first %d entries; view a folder to see the rest)", MaxListed)
	}
	return b.String(), nil
}

// plural returns "1 document", "2 documents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// size renders a byte count as the memory tool does: 512B, 1.5K, 4K, 2.1M.
func size(n int) string {
	units := []string{"B", "K", "M", "G"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(int(v)) {
		return strconv.Itoa(int(v)) + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
}

func (t *Tools) docCreate(ctx context.Context, in docCreateIn) (string, error) {
	if err := t.checkDoc("file_text", in.FileText); err != nil {
		return "", err
	}
	p, err := t.docs.create(ctx, in.Path, in.FileText, in.Overwrite)
	if err != nil {
		return "", err
	}
	return "File created successfully at: " + p, nil
}

// checkDoc refuses a document text argument over the size limit before
// anything is read.
func (t *Tools) checkDoc(name, s string) error {
	if len(s) > t.docs.maxSize {
		return fmt.Errorf("%w: %s is %d bytes, the document size limit is %d", docstore.ErrTooLarge, name, len(s), t.docs.maxSize)
	}
	return nil
}

func (t *Tools) docStrReplace(ctx context.Context, in docStrReplaceIn) (string, error) {
	if err := t.checkDoc("old_str", in.OldStr); err != nil {
		return "", err
	}
	if err := t.checkDoc("new_str", in.NewStr); err != nil {
		return "", err
	}
	if in.OldStr == "" {
		return "", fmt.Errorf("%w: old_str is empty; documents_insert adds text without replacing any", docstore.ErrInvalid)
	}
	var line int // where the replacement starts, from 1
	var logical string
	updated, err := t.docs.edit(ctx, in.Path, func(p, content string) (string, error) {
		logical = p
		switch n := strings.Count(content, in.OldStr); {
		case n == 0:
			return "", fmt.Errorf("%w: old_str does not occur verbatim in %s", docstore.ErrNoMatch, p)
		case n > 1:
			return "", fmt.Errorf("%w: old_str occurs %d times in %s, at lines %s; include more surrounding text to make it unique",
				docstore.ErrAmbiguous, n, p, occurrences(content, in.OldStr))
		}
		i := strings.Index(content, in.OldStr)
		line = strings.Count(content[:i], "\n") + 1
		return content[:i] + in.NewStr + content[i+len(in.OldStr):], nil
	})
	if err != nil {
		return "", err
	}
	lines := strings.Split(updated, "\n")
	end := line + strings.Count(in.NewStr, "\n")
	from, to := max(1, line-2), min(len(lines), end+2)
	body, _ := numbered(lines[from-1:to], from)
	return fmt.Sprintf("The document %s has been edited. Here are the edited lines and two on each side:\n%s", logical, body), nil
}

// occurrences lists the line numbers at which s starts in content, at
// most ten.
func occurrences(content, s string) string {
	var lines []string
	off := 0
	for len(lines) < 10 {
		i := strings.Index(content[off:], s)
		if i < 0 {
			break
		}
		lines = append(lines, strconv.Itoa(strings.Count(content[:off+i], "\n")+1))
		off += i + 1
	}
	return strings.Join(lines, ", ")
}

func (t *Tools) docInsert(ctx context.Context, in docInsertIn) (string, error) {
	if err := t.checkDoc("insert_text", in.InsertText); err != nil {
		return "", err
	}
	var logical string
	_, err := t.docs.edit(ctx, in.Path, func(p, content string) (string, error) {
		logical = p
		lines := strings.Split(content, "\n")
		if in.InsertLine < 0 || in.InsertLine > len(lines) {
			return "", fmt.Errorf("%w: insert_line %d: %s has %d lines, so it is 0 to %d", ErrInvalid, in.InsertLine, p, len(lines), len(lines))
		}
		text := strings.TrimSuffix(in.InsertText, "\n")
		return strings.Join(append(lines[:in.InsertLine:in.InsertLine], append([]string{text}, lines[in.InsertLine:]...)...), "\n"), nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("The document %s has been edited: text inserted after line %d.", logical, in.InsertLine), nil
}

func (t *Tools) docDelete(ctx context.Context, in docDeleteIn) (string, error) {
	p, folder, n, err := t.docs.del(ctx, in.Path)
	if err != nil {
		return "", err
	}
	if folder {
		return fmt.Sprintf("Successfully deleted the folder %s and the %s under it", p, plural(n, "document")), nil
	}
	return "Successfully deleted " + p, nil
}

func (t *Tools) docRename(ctx context.Context, in docRenameIn) (string, error) {
	from, to, n, err := t.docs.rename(ctx, in.OldPath, in.NewPath)
	if err != nil {
		return "", err
	}
	if n == 1 {
		return fmt.Sprintf("Successfully renamed %s to %s", from, to), nil
	}
	return fmt.Sprintf("Successfully renamed %s to %s (%d documents moved)", from, to, n), nil
}

func (t *Tools) docSearch(ctx context.Context, in docSearchIn) (string, error) {
	if err := t.checkText("query", in.Query); err != nil {
		return "", err
	}
	k, err := results("limit", in.Limit, 10, MaxResults)
	if err != nil {
		return "", err
	}
	hits, err := t.docs.search(ctx, in.Query, k)
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No document holds the words of %q.", in.Query), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s match, best first (score, path, lines holding the words):", plural(len(hits), "document"))
	for _, h := range hits {
		var ls []string
		for _, n := range matchingLines(h.content, in.Query, 10) {
			ls = append(ls, strconv.Itoa(n))
		}
		fmt.Fprintf(&b, "\n%.3f\t%s\tlines %s", h.score, h.path, strings.Join(ls, ", "))
	}
	return b.String(), nil
}
