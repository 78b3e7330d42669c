package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

// queryCmd answers one query (--vector, --text or both) or, with
// --queries, one per line of a JSONL file. A query's mode is --mode, or
// chosen per query: hybrid for a text when the collection has an embedder
// the command line can run (or a vector is given too), text (BM25) for a
// text otherwise, vector for a vector alone. A collection without a
// full-text index answers a text alone by its embedding, as before the
// index existed.
//
// Each answer of --queries is one JSON line, as --json prints a single
// one; a bad line stops the run after the answers before it, unless
// --skip-bad, which reports it on standard error and goes on. Lines obey
// the rules of import: one JSON object in valid UTF-8 per line, blank
// lines skipped. When ctx is done (a signal, see main), --queries stops
// before its next line, even while it waits for input, with an
// interruptedError counting the answers printed.
//
// In text and hybrid mode a query spreads by default as the memory
// adapters' do (mnemo.DefaultSpread): a match lifts the records next to
// it in its group, the place import gives a line (see place.go).
// --spread and --spread-window tune it; --spread 0 turns it off.
func queryCmd(ctx context.Context, args []string, stdin io.Reader, out, stderr io.Writer) error {
	fs := newFlags("query", out, stderr)
	dir := dbFlag(fs)
	name := collectionFlag(fs, true, "the collection `NAME`")
	vecJSON := fs.String("vector", "", "the query vector, a `JSON` array of numbers")
	text := fs.String("text", "", "the query `TEXT`: matched by its words (BM25 over the full-text index) and, in hybrid and vector mode, by its embedding")
	queries := fs.String("queries", "", "answer the queries of `FILE`, one JSON object per line (- for standard input), with one JSON line each")
	modeName := fs.String("mode", "", "the retrieval `MODE`: text, vector or hybrid (default: hybrid for a text when the collection has an embedder the command line can run or a vector is given too, else text; vector for a vector alone)")
	k := fs.Int("k", 10, "return the `N` best records")
	ef := fs.Int("ef", 0, "HNSW search width `N` (0: the collection's default)")
	filter := fs.String("filter", "", "metadata filter, a `JSON` object, e.g. '{\"source\": \"web\"}'")
	fusion := fs.String("fusion", "", "how a hybrid query fuses its two sides: `METHOD` weighted (each side's scores scaled to [0, 1], then weighted) or rrf (reciprocal rank) (default: the engine's, "+string(mnemo.FusionWeighted)+")")
	vectorWeight := fs.Float64("vector-weight", 0, fmt.Sprintf("the vector side's weight `W` in a hybrid query, in (0, 1); the text side's is 1-W (default: the engine's, %v)", mnemo.DefaultVectorWeight))
	depth := fs.Int("depth", 0, fmt.Sprintf("the candidates `N` each side of a hybrid query retrieves before fusion (0: the larger of --k and %d)", mnemo.DefaultFusionDepth))
	spread := fs.Float64("spread", mnemo.DefaultSpreadWeight, "in text and hybrid mode, the share `W` in [0, 1] of a match's score that the records next to it in its group (\""+mnemo.GroupField+"\", by \""+mnemo.PositionField+"\", as import stores a line's group and position) get, as the memory adapters query; 0 turns it off")
	spreadWindow := fs.Int("spread-window", mnemo.DefaultSpreadWindow, "how many records `N` on each side of a match --spread lifts, 1 to 16")
	asJSON := fs.Bool("json", false, "print the answer as one JSON line, as --queries does")
	skipBad := fs.Bool("skip-bad", false, "with --queries: report bad lines on standard error and go on instead of stopping")
	if err := fs.parse(args); err != nil {
		return err
	}
	mode := mnemo.Mode(*modeName)
	hybridFlags := fs.isSet("fusion") || fs.isSet("vector-weight") || fs.isSet("depth")
	spreadFlags := fs.isSet("spread") || fs.isSet("spread-window")
	switch {
	case *queries != "" && (*vecJSON != "" || *text != ""):
		return fs.fail("--queries goes without --vector and --text: each line holds its query")
	case *queries == "" && *vecJSON == "" && *text == "":
		return fs.fail("give --vector, --text or both, or --queries")
	case *skipBad && *queries == "":
		return fs.fail("--skip-bad goes with --queries")
	case mode != mnemo.ModeAuto && mode != mnemo.ModeText && mode != mnemo.ModeVector && mode != mnemo.ModeHybrid:
		return fs.fail("--mode %q, want text, vector or hybrid", *modeName)
	case *queries == "" && mode == mnemo.ModeVector && *vecJSON != "" && *text != "":
		return fs.fail("--mode vector takes --vector or --text, not both")
	case *queries == "" && (mode == mnemo.ModeText || mode == mnemo.ModeHybrid) && *text == "":
		return fs.fail("--mode %s needs --text", mode)
	case *k <= 0:
		return fs.fail("--k %d, want > 0", *k)
	case *ef < 0:
		return fs.fail("--ef %d, want >= 0", *ef)
	case *fusion != "" && *fusion != string(mnemo.FusionRRF) && *fusion != string(mnemo.FusionWeighted):
		return fs.fail("--fusion %q, want weighted or rrf", *fusion)
	case fs.isSet("vector-weight") && !(*vectorWeight > 0 && *vectorWeight < 1):
		return fs.fail("--vector-weight %v, want a number in (0, 1)", *vectorWeight)
	case *depth < 0:
		return fs.fail("--depth %d, want >= 0", *depth)
	case hybridFlags && (mode == mnemo.ModeText || mode == mnemo.ModeVector):
		return fs.fail("--fusion, --vector-weight and --depth tune hybrid queries, not --mode %s", mode)
	case !(*spread >= 0 && *spread <= 1):
		return fs.fail("--spread %v, want a number in [0, 1]", *spread)
	case *spreadWindow < 1 || *spreadWindow > mnemo.MaxSpreadWindow:
		return fs.fail("--spread-window %d, want 1 to %d", *spreadWindow, mnemo.MaxSpreadWindow)
	case fs.isSet("spread-window") && *spread == 0:
		return fs.fail("--spread-window goes with spreading, which --spread 0 turns off")
	case spreadFlags && mode == mnemo.ModeVector:
		return fs.fail("--spread and --spread-window tune text and hybrid queries, not --mode vector")
	}
	f, err := mnemo.ParseFilter(*filter)
	if err != nil {
		return fmt.Errorf("--filter: %w", err)
	}
	db, c, err := openCollection(ctx, *dir, *name)
	if err != nil {
		return err
	}
	defer db.Close()
	qr := newQuerier(c, *name, mode, mnemo.Query{K: *k, Ef: *ef, Filter: f,
		Fusion: mnemo.Fusion{Method: mnemo.FusionMethod(*fusion), VectorWeight: *vectorWeight, Depth: *depth},
		Spread: querySpread(*spread, *spreadWindow)})
	if qr.note != "" && (*text != "" && *vecJSON == "" || *queries != "") {
		fmt.Fprintf(stderr, "mnemo query: note: %s\n", qr.note)
	}
	if *queries != "" {
		return qr.answerFile(ctx, *queries, stdin, out, stderr, *skipBad)
	}
	s := querySpec{text: *text}
	if *vecJSON != "" {
		if err := json.Unmarshal([]byte(*vecJSON), &s.vector); err != nil {
			return fmt.Errorf("--vector: %v", err)
		}
		if s.vector == nil {
			return errors.New("--vector: want a JSON array of numbers, got null")
		}
	}
	hits, withVector, err := qr.answer(ctx, s)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeAnswer(out, nil, hits, withVector)
	}
	for _, h := range hits {
		fmt.Fprintf(out, "%.4f  %s  %s\n", h.Score, h.Record.ID, oneLine(h.Record.Content, 100))
	}
	return nil
}

// querySpread returns the spreading of --spread weight and
// --spread-window window: mnemo.DefaultSpread's fields, nil for weight 0.
func querySpread(weight float64, window int) *mnemo.Spread {
	if weight == 0 {
		return nil
	}
	s := mnemo.DefaultSpread()
	s.Weight, s.Window = weight, window
	return s
}

// A querier answers queries against one collection with the command's
// settings. It is not safe for concurrent use.
type querier struct {
	c        mnemo.Collection
	name     string
	mode     mnemo.Mode  // ModeAuto: chosen per query
	defaults mnemo.Query // K, Ef, Filter, Fusion and Spread of every query (Spread: not in vector mode)
	emb      embed.Embedder
	embErr   error  // why emb is nil
	note     string // what a text without a vector gets here in the default mode, when it is not hybrid
}

func newQuerier(c mnemo.Collection, name string, mode mnemo.Mode, defaults mnemo.Query) *querier {
	qr := &querier{c: c, name: name, mode: mode, defaults: defaults}
	qr.emb, qr.embErr = collectionEmbedder(c.Config())
	if mode == mnemo.ModeAuto && errors.Is(qr.embErr, errForeignEmbedder) && !c.Config().Text.Disabled {
		qr.note = fmt.Sprintf("a text without a vector is matched by its words only (text mode): collection %q was made with the embedder %s, which the command line does not have", name, c.Config().Embedder)
	}
	return qr
}

// A querySpec is one query as given: a text, a vector or both, and what
// it overrides of the command's settings.
type querySpec struct {
	text   string
	vector []float32
	filter *mnemo.Filter // nil: --filter
	k      int           // 0: --k
}

// answer runs one query and reports whether it had a vector (its hits
// then have a distance and a similarity).
func (qr *querier) answer(ctx context.Context, s querySpec) (hits []mnemo.Hit, withVector bool, err error) {
	q, err := qr.build(ctx, s)
	if err != nil {
		return nil, false, badQuery(err)
	}
	hits, err = qr.c.Query(ctx, q)
	return hits, q.Vector != nil, err
}

// build resolves a query's mode and, where the mode needs a vector that
// was not given, embeds its text.
func (qr *querier) build(ctx context.Context, s querySpec) (mnemo.Query, error) {
	q := qr.defaults
	q.Text, q.Vector = s.text, s.vector
	if s.filter != nil {
		q.Filter = s.filter
	}
	if s.k > 0 {
		q.K = s.k
	}
	q.Mode = qr.mode
	auto := q.Mode == mnemo.ModeAuto
	if auto {
		switch {
		case s.text == "":
			q.Mode = mnemo.ModeVector
		case s.vector != nil:
			q.Mode = mnemo.ModeHybrid
		case qr.c.Config().Text.Disabled:
			q.Mode = mnemo.ModeVector // a text alone, answered by its embedding
		case qr.emb != nil:
			q.Mode = mnemo.ModeHybrid
		default:
			q.Mode = mnemo.ModeText
		}
	}
	if q.Mode == mnemo.ModeVector && q.Vector != nil && s.text != "" {
		return mnemo.Query{}, errors.New("vector mode takes a vector or a text, not both")
	}
	if q.Mode != mnemo.ModeVector && s.text == "" {
		return mnemo.Query{}, fmt.Errorf("%s mode needs a text", q.Mode)
	}
	if q.Mode != mnemo.ModeText && q.Vector == nil {
		v, err := qr.embed(ctx, s.text, q.Mode)
		if auto && errors.Is(err, errZeroEmbedding) && q.Mode == mnemo.ModeHybrid {
			q.Mode = mnemo.ModeText // nothing to embed: the words alone
			err = nil
		}
		if err != nil {
			return mnemo.Query{}, err
		}
		q.Vector = v
	}
	if q.Mode == mnemo.ModeVector {
		q.Text, q.Spread = "", nil
	}
	return q, nil
}

// embed embeds a query text for a query in mode, with the collection's
// embedder: only that one makes vectors of its space.
func (qr *querier) embed(ctx context.Context, text string, mode mnemo.Mode) ([]float32, error) {
	instead := "use --mode text, or give a vector"
	if mode == mnemo.ModeVector && qr.c.Config().Text.Disabled {
		instead = "give a vector"
	}
	switch {
	case errors.Is(qr.embErr, errNoEmbedder):
		return nil, fmt.Errorf("collection %q has no recorded embedder, so a text cannot be embedded in its vector space for %s mode; %s, made the way its records' vectors were", qr.name, mode, instead)
	case qr.embErr != nil:
		return nil, fmt.Errorf("collection %q was made with the embedder %s, which the command line does not have, so a text cannot be embedded for %s mode; %s, a vector from %s", qr.name, qr.c.Config().Embedder, mode, instead, qr.c.Config().Embedder)
	}
	v, err := embedOne(ctx, qr.emb, text)
	if err != nil {
		return nil, fmt.Errorf("text %q: %w", oneLine(text, 40), err)
	}
	return v, nil
}

// queryLine is the JSONL form of a query in a --queries file.
type queryLine struct {
	ID     json.RawMessage `json:"id"`
	Text   string          `json:"text"`
	Vector []float32       `json:"vector"`
	Filter json.RawMessage `json:"filter"`
	K      *int            `json:"k"`
}

// answerFile answers the queries of file ("-": in) and prints one JSON
// line per query on out. Once ctx is done it stops before the next line,
// and with ctx's end during a query it stops at that query, not skipping
// it as bad.
func (qr *querier) answerFile(ctx context.Context, file string, in io.Reader, out, stderr io.Writer, skipBad bool) error {
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	lines := newLineReader(&ctxReader{ctx: ctx, r: in}, maxLine)
	answered, bad := 0, 0
	interrupted := func() error {
		w.Flush()
		return &interruptedError{fmt.Sprintf("%d queries answered", answered)}
	}
	for {
		if ctx.Err() != nil {
			return interrupted()
		}
		raw, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil && ctx.Err() != nil {
			return interrupted()
		}
		if err != nil && !errors.Is(err, errLongLine) {
			return fmt.Errorf("line %d: %v", lines.n, err)
		}
		if err == nil && len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var id json.RawMessage
		var hits []mnemo.Hit
		withVector := false
		if err == nil {
			id, hits, withVector, err = qr.answerLine(ctx, raw)
		} else {
			err = badQuery(err)
		}
		if err != nil && ctx.Err() != nil {
			return interrupted()
		}
		if err != nil {
			if !skipBad || !isBadQuery(err) {
				w.Flush()
				return fmt.Errorf("line %d: %v (%d queries answered before it)", lines.n, err, answered)
			}
			bad++
			w.Flush()
			fmt.Fprintf(stderr, "line %d: skipped: %v\n", lines.n, err)
			continue
		}
		if err := writeAnswer(w, id, hits, withVector); err != nil {
			return err
		}
		answered++
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "answered %d queries, skipped %d bad lines\n", answered, bad)
	}
	return nil
}

// answerLine parses and runs the query of one non-blank line: its id as
// given, its hits and whether it had a vector.
func (qr *querier) answerLine(ctx context.Context, raw []byte) (json.RawMessage, []mnemo.Hit, bool, error) {
	var ql queryLine
	if err := decodeLine(raw, &ql); err != nil {
		return nil, nil, false, badQuery(err)
	}
	s := querySpec{text: ql.Text, vector: ql.Vector}
	if ql.Text == "" && ql.Vector == nil {
		return nil, nil, false, badQuery(errors.New(`no "text" and no "vector"`))
	}
	if ql.K != nil {
		if *ql.K <= 0 {
			return nil, nil, false, badQuery(fmt.Errorf("k %d, want > 0", *ql.K))
		}
		s.k = *ql.K
	}
	if len(ql.Filter) > 0 && string(ql.Filter) != "null" {
		f, err := mnemo.ParseFilter(string(ql.Filter))
		if err != nil {
			return nil, nil, false, err
		}
		s.filter = f
	}
	hits, withVector, err := qr.answer(ctx, s)
	return ql.ID, hits, withVector, err
}

// A badQueryError is the fault of a query, not of the database: a line of
// --queries with one can be skipped.
type badQueryError struct{ error }

func (e badQueryError) Unwrap() error { return e.error }

func badQuery(err error) error { return badQueryError{err} }

// isBadQuery reports whether err is the fault of the query (its line can
// be skipped), not of the database.
func isBadQuery(err error) bool {
	if errors.As(err, new(badQueryError)) {
		return true
	}
	for _, target := range []error{mnemo.ErrBadQuery, mnemo.ErrBadFilter, mnemo.ErrDimension,
		mnemo.ErrNonFinite, mnemo.ErrZeroVector, mnemo.ErrNormOverflow} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// jsonAnswer is the JSON form of a query's answer: the query's id as
// given (absent when it has none) and its hits, best first.
type jsonAnswer struct {
	ID   json.RawMessage `json:"id,omitempty"`
	Hits []jsonHit       `json:"hits"`
}

// jsonHit is the JSON form of a hit. Distance and similarity are those of
// the query's vector (absent for a text query without one); a rank is
// absent when its side did not find the hit or did not run. Group and
// position are the record's place, as export writes it (see toJSON).
type jsonHit struct {
	ID         string         `json:"id"`
	Score      float64        `json:"score"`
	Content    string         `json:"content"`
	Distance   *float32       `json:"distance,omitempty"`
	Similarity *float32       `json:"similarity,omitempty"`
	VectorRank int            `json:"vector_rank,omitempty"`
	TextRank   int            `json:"text_rank,omitempty"`
	TextScore  *float64       `json:"text_score,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Group      *lineGroup     `json:"group,omitempty"`
	Position   *linePosition  `json:"position,omitempty"`
}

// writeAnswer prints the answer with id (nil: none) as one JSON line.
func writeAnswer(w io.Writer, id json.RawMessage, hits []mnemo.Hit, withVector bool) error {
	a := jsonAnswer{ID: id, Hits: make([]jsonHit, len(hits))}
	for i, h := range hits {
		r := toJSON(h.Record)
		jh := jsonHit{ID: h.Record.ID, Score: h.Score, Content: h.Record.Content,
			VectorRank: h.VectorRank, TextRank: h.TextRank, Metadata: r.Metadata, Group: r.Group, Position: r.Position}
		if withVector {
			jh.Distance, jh.Similarity = &h.Distance, &h.Similarity
		}
		if h.TextRank > 0 {
			jh.TextScore = &h.TextScore
		}
		a.Hits[i] = jh
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(a)
}
