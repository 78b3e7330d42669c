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
	"github.com/mnemodb/mnemo/memory/embed"
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
//
// When ctx is done (a signal, see main) the import stops before its next
// line or commit, even while it waits for input, and its error, an
// interruptedError, says how many records were committed: the batch in
// progress is not written, unless its commit was under way (a server may
// have committed it as the cancel reached it).
//
// importCmd parses and checks the flags and opens the input and the
// collection; an importer does the rest.
func importCmd(ctx context.Context, args []string, stdin io.Reader, out, stderr io.Writer) (err error) {
	fs := newFlags("import", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, true, "the collection `NAME`")
	dim := fs.Int("dim", 0, "create the collection (and the database) with dimension `N` if it does not exist")
	ef := addEmbedderFlags(fs, "create the collection (and the database) if it does not exist with the embedder `NAME`, which sets its dimension (the offline one's is 384; give a model's with --dim); lines without a vector are embedded from their content by the collection's embedder")
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
	newCfg, flagEmb, err := importConfig(fs, *dim, *metricName, ef)
	if err != nil {
		return err
	}
	embedderName := *ef.name
	in, size := stdin, int64(0)
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in, size = f, regularSize(f)
	}
	db, c, err := openImport(ctx, *dir, *name, newCfg, embedderName)
	if err != nil {
		return err
	}
	defer closeDB(db, &err)
	emb, embErr := collectionEmbedder(c.Config())
	if flagEmb != nil { // the flags' address and key, for the collection's own model
		emb, embErr = flagEmb, nil
	}
	im := &importer{c: c, seq: sequence{c: c}, name: *name, emb: emb, embErr: embErr, lines: newLineReader(&ctxReader{ctx: ctx, r: in}, maxLine), out: out, stderr: stderr,
		batch: *batch, skipBad: *skipBad, contentIDs: *contentIDs, seen: map[string]bool{}}
	if *showProgress || !fs.isSet("progress") && isTerminal(stderr) {
		im.prog = newProgress(stderr, "importing", "records", size)
	}
	defer im.prog.clear() // before the caller reports an error
	im.sharedTerminal = isTerminal(out) && im.prog != nil
	if err = im.run(ctx); err != nil && ctx.Err() != nil {
		return im.interrupted()
	}
	return err
}

// importConfig returns the config of the collection import creates if it
// does not exist, from --dim, --metric and the embedder flags, and the
// embedder those name (nil without --embedder): its Dimension is the
// embedder's, or else --dim (0 when not given: create nothing). A bad
// metric or embedder, or a --dim the offline embedder disagrees with, is
// a usage error of fs.
func importConfig(fs *flagSet, dim int, metricName string, ef *embedderFlags) (mnemo.CollectionConfig, embed.Embedder, error) {
	metric, err := mnemo.ParseMetric(metricName)
	if err != nil {
		return mnemo.CollectionConfig{}, nil, fs.fail("unknown metric %q (want cosine, dot or l2)", metricName)
	}
	cfg := mnemo.CollectionConfig{Dimension: dim, Metric: metric}
	e, err := ef.build(dim)
	if err != nil {
		return cfg, nil, fs.fail("--embedder: %v", err)
	}
	if e == nil {
		return cfg, nil, nil
	}
	if dim != 0 && dim != e.Dimension() {
		return cfg, nil, fs.fail("--dim %d disagrees with --embedder %s, whose dimension is %d", dim, *ef.name, e.Dimension())
	}
	cfg.Dimension, cfg.Embedder = e.Dimension(), e.Identity()
	return cfg, e, nil
}

// regularSize returns the size of f if it is a regular file, else 0
// (unknown).
func regularSize(f *os.File) int64 {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

// openImport opens --db dir for writing, creating a database there if
// newCfg has a positive dimension, and its collection name (see
// importCollection). The caller closes the store.
func openImport(ctx context.Context, dir, name string, newCfg mnemo.CollectionConfig, embedderName string) (mnemo.Store, mnemo.Collection, error) {
	db, err := openStore(ctx, dir, true, newCfg.Dimension > 0)
	if errors.Is(err, engine.ErrNoDatabase) {
		return nil, nil, fmt.Errorf("no database in %s; pass --dim or --embedder to create it", dir)
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := importCollection(ctx, db, dir, name, newCfg, embedderName)
	if err != nil {
		db.Close() // the error that matters is err
		return nil, nil, err
	}
	return db, c, nil
}

// importCollection returns the collection name of db, the store --db dir
// names, creating it with newCfg if it does not exist and newCfg has a
// positive dimension. When --embedder embedderName gave newCfg an
// embedder, a collection that exists must have been made with it.
func importCollection(ctx context.Context, db mnemo.Store, dir, name string, newCfg mnemo.CollectionConfig, embedderName string) (mnemo.Collection, error) {
	c, err := db.Collection(ctx, name)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		if newCfg.Dimension <= 0 {
			return nil, fmt.Errorf("collection %q does not exist in %s; pass --dim or --embedder to create it", name, dir)
		}
		c, err = db.CreateCollection(ctx, name, newCfg)
	}
	if err != nil {
		return nil, err
	}
	if newCfg.Embedder != "" && c.Config().Embedder != newCfg.Embedder {
		return nil, fmt.Errorf("collection %q exists with %s, not --embedder %s (%s)", name, describeEmbedder(c.Config().Embedder), embedderName, newCfg.Embedder)
	}
	return c, nil
}

// An importer commits the records of one JSONL input to a collection, in
// batches, as importCmd describes. The batch waiting to be committed is
// pending; its records without a vector are embedded embedBatch at a
// time, and before a bad line is reported, so that bad lines are
// reported in line order. An importer does not own the collection or the
// input. It is not safe for concurrent use.
type importer struct {
	c      mnemo.Collection
	name   string         // of c, for messages
	emb    embed.Embedder // c's embedder; nil when embErr says why not
	embErr error          // from collectionEmbedder
	lines  *lineReader    // the input
	out    io.Writer      // "committed N" lines
	stderr io.Writer      // skipped lines and the summary

	batch          int       // --batch: records per commit
	skipBad        bool      // --skip-bad
	contentIDs     bool      // --content-ids
	prog           *progress // nil for no progress
	sharedTerminal bool      // out is a terminal too: clear prog's line before writing

	pending      []mnemo.Record  // the batch, in line order
	lineOf       []int           // the line of each pending record
	fromSequence []bool          // whether each pending record takes its position from the sequence
	seq          sequence        // of c
	toEmbed      []int           // indexes in pending of records without a vector yet
	seen         map[string]bool // the ids in pending
	committed    int             // records committed so far
	inFlight     int             // records of the commit under way, 0 between commits
	bad          int             // bad lines skipped so far
}

// run imports every line of the input, then finishes. Its error stops
// the import; the records of the commits reported before it are durable.
// It stops with ctx's error before a line once ctx is done.
func (im *importer) run(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, err := im.lines.next()
		if err == io.EOF {
			break
		}
		switch {
		case errors.Is(err, errLongLine):
			err = im.refuse(ctx, err)
		case err != nil:
			return fmt.Errorf("line %d: %v (nothing of this batch was written; %d records committed before it)", im.lines.n, err, im.committed)
		default:
			err = im.line(ctx, raw)
		}
		if err != nil {
			return err
		}
	}
	return im.finish(ctx)
}

// interrupted is the error of an import ctx's end stopped: what it had
// committed, and what became of the batch in progress.
func (im *importer) interrupted() error {
	if im.inFlight > 0 {
		return &interruptedError{fmt.Sprintf("%d records committed; the %d after them were being committed and may or may not have been written", im.committed, im.inFlight)}
	}
	return &interruptedError{fmt.Sprintf("%d records committed; nothing after them was written", im.committed)}
}

// finish commits the last batch and prints the summary on stderr.
func (im *importer) finish(ctx context.Context) error {
	if err := im.commit(ctx); err != nil {
		return err
	}
	im.prog.clear()
	fmt.Fprintf(im.stderr, "imported %d records, skipped %d bad lines%s\n", im.committed, im.bad, im.prog.summary(int64(im.committed)))
	return nil
}

// line takes raw, the line just read: it skips a blank line, adds a good
// one's record to the batch and refuses a bad one.
func (im *importer) line(ctx context.Context, raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	rec, embedIt, fromSequence, err := im.record(raw)
	if err != nil {
		return im.refuse(ctx, err)
	}
	return im.add(ctx, rec, embedIt, fromSequence)
}

// record decodes raw, a non-blank line, into its record and checks it:
// whether the collection takes it (or, for a record without a vector,
// can embed its content, reported by embedIt) and that its id is new to
// the batch. With --content-ids a record without an id is given one.
// fromSequence reports a record whose position is to come from the
// collection's sequence (see parseLine).
func (im *importer) record(raw []byte) (rec mnemo.Record, embedIt, fromSequence bool, err error) {
	rec, fromSequence, err = parseLine(raw)
	if err != nil {
		return rec, false, false, err
	}
	if rec.ID == "" && im.contentIDs {
		rec.ID = contentID(rec.Content)
	}
	embedIt = rec.Vector == nil
	if embedIt {
		err = canEmbed(rec, im.name, im.c.Config().Embedder, im.embErr)
	} else {
		err = validate(im.c, rec)
	}
	if err == nil && rec.ID != "" && im.seen[rec.ID] {
		err = fmt.Errorf("id %q appears twice in one batch", rec.ID)
	}
	return rec, embedIt, fromSequence, err
}

// add appends rec, the record of the line just read, to the batch, to be
// embedded if embedIt and given a position of the collection's sequence
// if fromSequence. It embeds the records waiting for a vector when there
// are embedBatch of them, and commits the batch when it is full.
func (im *importer) add(ctx context.Context, rec mnemo.Record, embedIt, fromSequence bool) error {
	if rec.ID != "" {
		im.seen[rec.ID] = true
	}
	if embedIt {
		im.toEmbed = append(im.toEmbed, len(im.pending))
	}
	im.pending = append(im.pending, rec)
	im.lineOf = append(im.lineOf, im.lines.n)
	im.fromSequence = append(im.fromSequence, fromSequence)
	if len(im.toEmbed) == embedBatch {
		if err := im.embedPending(ctx); err != nil {
			return err
		}
	}
	if len(im.pending) == im.batch {
		return im.commit(ctx)
	}
	return nil
}

// refuse rejects the line just read for err, after embedding the pending
// records, so that the bad lines among them are reported first.
func (im *importer) refuse(ctx context.Context, err error) error {
	if err := im.embedPending(ctx); err != nil {
		return err
	}
	return im.reject(im.lines.n, err)
}

// reject reports line as bad for err: an error that stops the import, or
// with --skip-bad nil after counting the line and reporting it on stderr.
func (im *importer) reject(line int, err error) error {
	if !im.skipBad {
		return fmt.Errorf("line %d: %v (nothing of this batch was written; %d records committed before it)", line, err, im.committed)
	}
	im.bad++
	im.prog.clear()
	fmt.Fprintf(im.stderr, "line %d: skipped: %v\n", line, err)
	return nil
}

// embedPending embeds the pending records that lack a vector, in one call
// (see embedTexts), and checks them against the collection. It rejects
// the ones that fail, in line order, and drops them from the batch. It
// returns ctx's error, rejecting nothing, when ctx ended during the call.
func (im *importer) embedPending(ctx context.Context) error {
	if len(im.toEmbed) == 0 {
		return nil
	}
	vecs, errs := embedTexts(ctx, im.emb, im.textsToEmbed())
	if err := ctx.Err(); err != nil {
		return err // the texts are not to blame
	}
	drop := map[int]bool{}
	for i, j := range im.toEmbed {
		err := errs[i]
		if err == nil {
			im.pending[j].Vector = vecs[i]
			err = validate(im.c, im.pending[j])
		}
		if err == nil {
			continue
		}
		if err := im.reject(im.lineOf[j], err); err != nil {
			return err
		}
		drop[j] = true
	}
	im.toEmbed = im.toEmbed[:0]
	im.drop(drop)
	return nil
}

// textsToEmbed returns the contents of the pending records that lack a
// vector, in line order, in a new slice.
func (im *importer) textsToEmbed() []string {
	texts := make([]string, len(im.toEmbed))
	for i, j := range im.toEmbed {
		texts[i] = im.pending[j].Content
	}
	return texts
}

// drop removes the pending records whose indexes it holds, and their ids
// from seen, keeping the others in line order. O(len(pending)) when drop
// is not empty.
func (im *importer) drop(drop map[int]bool) {
	if len(drop) == 0 {
		return
	}
	n := 0
	for j := range im.pending {
		if drop[j] {
			delete(im.seen, im.pending[j].ID)
			continue
		}
		im.pending[n], im.lineOf[n], im.fromSequence[n] = im.pending[j], im.lineOf[j], im.fromSequence[j]
		n++
	}
	clear(im.pending[n:])
	im.pending, im.lineOf, im.fromSequence = im.pending[:n], im.lineOf[:n], im.fromSequence[:n]
}

// commit embeds what is pending, upserts the batch, if any is left, in
// one durable write, acknowledges it and starts the next batch. Once ctx
// is done it returns ctx's error without writing; inFlight counts the
// records of the write while it is under way, and of a failed one.
func (im *importer) commit(ctx context.Context) error {
	if err := im.embedPending(ctx); err != nil {
		return err
	}
	if len(im.pending) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := im.place(ctx); err != nil {
		return fmt.Errorf("positions for the records up to line %d: %w (%d records committed before them)", im.lines.n, err, im.committed)
	}
	im.inFlight = len(im.pending)
	if _, err := im.c.Upsert(ctx, im.pending...); err != nil {
		return fmt.Errorf("commit of the records up to line %d: %w (%d records committed before them)", im.lines.n, err, im.committed)
	}
	im.inFlight = 0
	im.committed += len(im.pending)
	clear(im.pending)
	im.pending, im.lineOf, im.fromSequence = im.pending[:0], im.lineOf[:0], im.fromSequence[:0]
	clear(im.seen)
	im.acknowledge()
	return nil
}

// place gives the pending records that take their position from the
// collection's sequence consecutive positions of it, in line order (one
// reservation per batch), after moving the sequence past the positions
// the batch gives. A reservation the commit then fails to use is a gap
// in the sequence, which orders the records all the same.
func (im *importer) place(ctx context.Context) error {
	n := 0
	for _, s := range im.fromSequence {
		if s {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	next, err := im.seq.take(ctx, n)
	if err != nil {
		return err
	}
	for j, s := range im.fromSequence {
		if s {
			im.pending[j].Metadata[mnemo.PositionField] = next
			next++
		}
	}
	return nil
}

// acknowledge prints "committed N" on out, N the records committed so
// far, and reports the progress.
func (im *importer) acknowledge() {
	if im.sharedTerminal {
		im.prog.clear()
	}
	fmt.Fprintf(im.out, "committed %d\n", im.committed)
	im.prog.update(int64(im.committed), im.lines.read)
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
// decodeLine), with its place in its metadata (see placeLine), and
// reports whether its position is to come from the collection's
// sequence.
func parseLine(raw []byte) (rec mnemo.Record, fromSequence bool, err error) {
	var jr jsonRecord
	if err := decodeLine(raw, &jr); err != nil {
		return mnemo.Record{}, false, err
	}
	rec = mnemo.Record{ID: jr.ID, Vector: jr.Vector, Content: jr.Content, Metadata: jr.Metadata}
	fromSequence, err = placeLine(&rec, jr.Group, jr.Position)
	return rec, fromSequence, err
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
