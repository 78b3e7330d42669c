package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// importCmd reads JSONL records and commits them in batches with fsync,
// printing "committed N" (cumulative) on stdout after each commit: a
// record counted there is durable. Each commit gets its line, however
// many there are, since the line is the acknowledgement: a script that
// resumes after a crash starts after the last N it saw. A bad line stops
// the import before its batch is written, unless --skip-bad, which
// reports it and goes on.
//
// A line without a vector is embedded from its content by the
// collection's embedder (recorded in its config; --embedder gives a new
// collection one), embedBatch texts per call, before its batch commits.
// Bad lines are reported in line order, so the texts waiting to be
// embedded are embedded before a bad line is reported.
//
// Progress (records, share of the file read, records/s, time left) goes
// to stderr when it is a terminal or when --progress asks; --progress=false
// turns it off. From standard input the size is unknown: no time left.
//
// A line holds exactly one JSON object (surrounding whitespace aside) in
// valid UTF-8; blank lines are skipped. Import never stores a record
// altered by decoding: a line with invalid UTF-8 or a lone UTF-16
// surrogate escape, which encoding/json would turn into U+FFFD, is bad.
func importCmd(args []string, stdin io.Reader, out, stderr io.Writer) (err error) {
	fs := newFlags("import", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, true, "the collection `NAME`")
	dim := fs.Int("dim", 0, "create the collection (and the database) with dimension `N` if it does not exist")
	embedderName := fs.String("embedder", "", "create the collection (and the database) if it does not exist with the embedder `NAME`, "+
		embedderNames+" (the offline one), which sets its dimension; lines without a vector are embedded from their content by the collection's embedder")
	metricName := fs.String("metric", "cosine", "the metric `M` of a collection --dim or --embedder creates: cosine, dot or l2")
	file := fs.String("file", "", "read `FILE` instead of standard input")
	batch := fs.Int("batch", 1000, "commit every `N` records")
	skipBad := fs.Bool("skip-bad", false, "report bad lines and go on instead of stopping")
	contentIDs := fs.Bool("content-ids", false, "give a line without an id the hash of its content as its id, so that running the same import again (after an interruption) replaces what it stored instead of adding it twice; lines of equal content become one record")
	showProgress := fs.Bool("progress", false, "show progress, records/s and the time left on standard error (default: when it is a terminal)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *batch <= 0 {
		return fs.fail("--batch %d, want > 0", *batch)
	}
	metric, err := parseMetric(*metricName)
	if err != nil {
		return fs.fail("%v", err)
	}
	newCfg := mnemo.CollectionConfig{Dimension: *dim, Metric: metric}
	if *embedderName != "" {
		e, err := newEmbedder(*embedderName)
		if err != nil {
			return fs.fail("--embedder: %v", err)
		}
		if *dim != 0 && *dim != e.Dimension() {
			return fs.fail("--dim %d disagrees with --embedder %s, whose dimension is %d", *dim, *embedderName, e.Dimension())
		}
		newCfg.Dimension, newCfg.Embedder = e.Dimension(), e.Identity()
	}
	in, size := stdin, int64(0)
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
		in = f
	}
	create := newCfg.Dimension > 0
	db, err := openStore(*dir, true, create)
	if errors.Is(err, engine.ErrNoDatabase) {
		return fmt.Errorf("no database in %s; pass --dim or --embedder to create it", *dir)
	}
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	c, err := db.Collection(context.Background(), *name)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		if !create {
			return fmt.Errorf("collection %q does not exist in %s; pass --dim or --embedder to create it", *name, *dir)
		}
		c, err = db.CreateCollection(context.Background(), *name, newCfg)
	}
	if err != nil {
		return err
	}
	if newCfg.Embedder != "" && c.Config().Embedder != newCfg.Embedder {
		return fmt.Errorf("collection %q exists with %s, not --embedder %s (%s)", *name, describeEmbedder(c.Config().Embedder), *embedderName, newCfg.Embedder)
	}
	emb, embErr := collectionEmbedder(c.Config())
	var prog *progress
	if *showProgress || !fs.isSet("progress") && isTerminal(stderr) {
		prog = newProgress(stderr, "importing", "records", size)
	}
	defer prog.clear() // before the caller reports an error
	sharedTerminal := isTerminal(out) && prog != nil
	lines := newLineReader(in, maxLine)
	var (
		pending []mnemo.Record // the batch, in line order
		lineOf  []int          // the line of each pending record
		toEmbed []int          // pending records without a vector yet
	)
	committed, bad := 0, 0
	seen := map[string]bool{}
	// reject reports a bad line: an error that stops the import, or with
	// --skip-bad nil after reporting it.
	reject := func(line int, err error) error {
		if !*skipBad {
			return fmt.Errorf("line %d: %v (nothing of this batch was written; %d records committed before it)", line, err, committed)
		}
		bad++
		prog.clear()
		fmt.Fprintf(stderr, "line %d: skipped: %v\n", line, err)
		return nil
	}
	// embedPending embeds the pending records that lack a vector and
	// validates them, dropping (or stopping at) the bad ones.
	embedPending := func() error {
		if len(toEmbed) == 0 {
			return nil
		}
		texts := make([]string, len(toEmbed))
		for i, j := range toEmbed {
			texts[i] = pending[j].Content
		}
		vecs, errs := embedTexts(context.Background(), emb, texts)
		drop := map[int]bool{}
		for i, j := range toEmbed {
			err := errs[i]
			if err == nil {
				pending[j].Vector = vecs[i]
				err = validate(c, pending[j])
			}
			if err != nil {
				if err := reject(lineOf[j], err); err != nil {
					return err
				}
				drop[j] = true
				delete(seen, pending[j].ID)
			}
		}
		toEmbed = toEmbed[:0]
		if len(drop) > 0 {
			n := 0
			for j := range pending {
				if !drop[j] {
					pending[n], lineOf[n] = pending[j], lineOf[j]
					n++
				}
			}
			clear(pending[n:])
			pending, lineOf = pending[:n], lineOf[:n]
		}
		return nil
	}
	commit := func() error {
		if err := embedPending(); err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		if _, err := c.Upsert(context.Background(), pending...); err != nil {
			return fmt.Errorf("commit of the records up to line %d: %w (%d records committed before them)", lines.n, err, committed)
		}
		committed += len(pending)
		clear(pending)
		pending, lineOf = pending[:0], lineOf[:0]
		clear(seen)
		if sharedTerminal {
			prog.clear()
		}
		fmt.Fprintf(out, "committed %d\n", committed)
		prog.update(int64(committed), lines.read)
		return nil
	}
	for {
		raw, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, errLongLine) {
			return fmt.Errorf("line %d: %v (nothing of this batch was written; %d records committed before it)", lines.n, err, committed)
		}
		var rec mnemo.Record
		if err == nil {
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
			rec, err = parseLine(raw)
			if err == nil && rec.ID == "" && *contentIDs {
				rec.ID = contentID(rec.Content)
			}
		}
		embedIt := err == nil && rec.Vector == nil
		switch {
		case err != nil:
		case embedIt:
			err = canEmbed(rec, *name, c.Config().Embedder, embErr)
		default:
			err = validate(c, rec)
		}
		if err == nil && rec.ID != "" && seen[rec.ID] {
			err = fmt.Errorf("id %q appears twice in one batch", rec.ID)
		}
		if err != nil {
			// Report the lines before this one first.
			if err := embedPending(); err != nil {
				return err
			}
			if err := reject(lines.n, err); err != nil {
				return err
			}
			continue
		}
		if rec.ID != "" {
			seen[rec.ID] = true
		}
		if embedIt {
			toEmbed = append(toEmbed, len(pending))
		}
		pending = append(pending, rec)
		lineOf = append(lineOf, lines.n)
		if len(toEmbed) == embedBatch {
			if err := embedPending(); err != nil {
				return err
			}
		}
		if len(pending) == *batch {
			if err := commit(); err != nil {
				return err
			}
		}
	}
	if err := commit(); err != nil {
		return err
	}
	prog.clear()
	fmt.Fprintf(stderr, "imported %d records, skipped %d bad lines%s\n", committed, bad, prog.summary(int64(committed)))
	return nil
}

// contentID is the id --content-ids gives a line without one: the first
// 16 bytes of the SHA-256 of its content, in hex.
func contentID(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// embedBatch is the number of texts import embeds in one call.
const embedBatch = 256

// canEmbed reports why rec, a record without a vector, cannot be given one
// from its content in the collection name, made with the embedder
// identity, when embErr (from collectionEmbedder) says it is unavailable;
// nil if it can.
func canEmbed(rec mnemo.Record, name, identity string, embErr error) error {
	switch {
	case errors.Is(embErr, errNoEmbedder):
		return fmt.Errorf("no vector, and collection %q has no recorded embedder to make one from the content (a collection made with --embedder %s has one)", name, embedderNames)
	case embErr != nil:
		return fmt.Errorf("no vector, and collection %q was made with the embedder %s, which the command line does not have; give the line its vector", name, identity)
	case strings.TrimSpace(rec.Content) == "":
		return errors.New("no vector, and no content to embed")
	}
	return nil
}

// parseLine decodes one non-blank JSONL line into a record (see
// decodeLine).
func parseLine(raw []byte) (mnemo.Record, error) {
	var jr jsonRecord
	if err := decodeLine(raw, &jr); err != nil {
		return mnemo.Record{}, err
	}
	return mnemo.Record{ID: jr.ID, Vector: jr.Vector, Content: jr.Content, Metadata: jr.Metadata}, nil
}

// decodeLine decodes one non-blank JSONL line into v, a pointer to a
// struct, refusing fields v does not have. The line must be valid UTF-8,
// with no lone UTF-16 surrogate escape, and hold exactly one JSON value,
// with only whitespace around it.
func decodeLine(raw []byte, v any) error {
	if !utf8.Valid(raw) {
		return fmt.Errorf("invalid UTF-8 at byte %d", invalidUTF8(raw)+1)
	}
	if i := loneSurrogate(raw); i >= 0 {
		return fmt.Errorf("lone UTF-16 surrogate escape %s at byte %d (it has no UTF-8 form)", raw[i:i+6], i+1)
	}
	text := bytes.TrimSpace(raw)
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if end := int(dec.InputOffset()); end < len(text) {
		start := len(raw) - len(bytes.TrimLeftFunc(raw, unicode.IsSpace))
		return fmt.Errorf("text after the JSON value at byte %d: %q", start+end+1, oneLine(string(text[end:]), 20))
	}
	return nil
}

// invalidUTF8 returns the offset of the first byte of b that is not part
// of a valid UTF-8 encoding, or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// loneSurrogate returns the offset of the first \u escape in a JSON string
// of line that names a UTF-16 surrogate not completed by its pair, or -1.
// encoding/json decodes such an escape as U+FFFD, so two different ids
// would become one. Line must be valid UTF-8 (no byte of a multi-byte
// sequence is '"' or '\\').
func loneSurrogate(line []byte) int {
	inString := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			r := unicodeEscape(line[i:])
			switch {
			case r < 0:
				i++ // a one-character escape, or a malformed one for the decoder to report
			case r >= 0xDC00 && r <= 0xDFFF:
				return i
			case r >= 0xD800 && r <= 0xDBFF:
				if lo := unicodeEscape(line[i+6:]); lo < 0xDC00 || lo > 0xDFFF {
					return i
				}
				i += 11
			default:
				i += 5
			}
		}
	}
	return -1
}

// unicodeEscape returns the code unit of a \uXXXX escape at the start of
// b, or -1.
func unicodeEscape(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// maxLine is the longest input line import reads, without its line end.
const maxLine = 64 << 20

// errLongLine reports a line longer than the reader's limit.
var errLongLine = fmt.Errorf("longer than the %d MiB line limit", maxLine>>20)

// lineReader reads lines of at most max bytes, without their "\n" or
// "\r\n". A longer line is read to its end and discarded, so reading can
// go on after it.
type lineReader struct {
	r    *bufio.Reader
	max  int
	buf  []byte
	n    int   // lines returned (or reported too long) so far
	read int64 // bytes of those lines, with their line ends
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line, valid until the following call; errLongLine
// for a line over the limit; io.EOF after the last line.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	long := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.read += int64(len(chunk))
		if !long {
			lr.buf = append(lr.buf, chunk...)
			if len(lr.buf) > lr.max+len("\r\n") {
				long, lr.buf = true, lr.buf[:0]
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(chunk) == 0 && len(lr.buf) == 0 && !long {
			return nil, io.EOF
		}
		lr.n++
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read: %w", err)
		}
		line := bytes.TrimSuffix(lr.buf, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if long || len(line) > lr.max {
			return nil, errLongLine
		}
		return line, nil
	}
}

func parseMetric(s string) (mnemo.Metric, error) {
	switch strings.ToLower(s) {
	case "cosine":
		return mnemo.Cosine, nil
	case "dot", "ip":
		return mnemo.Dot, nil
	case "l2", "euclidean":
		return mnemo.L2, nil
	}
	return 0, fmt.Errorf("unknown metric %q (want cosine, dot or l2)", s)
}
