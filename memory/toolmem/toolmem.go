// Package toolmem is a tool-usage and text memory for agents, the Go form
// of mango's MemoryService: an agent stores which tool (and which
// arguments) answered a question, and later retrieves the entries whose
// questions are most similar to a new one; it can also save and search
// free text.
//
// Tool entries and text entries live in two collections of an engine.DB
// ("<name>.tools" and "<name>.texts"). Questions and texts are embedded
// with an embed.Embedder (the offline hashing embedder by default), whose
// identity is stored with the collections: reopening with another embedder
// is an error wrapping embed.ErrMismatch, not a silent mix of vector
// spaces.
//
// # Scores
//
// Similarity is max(0, 1 - d) for the cosine distance d between the
// question and a stored one, as in the original. Retrieve and SearchText
// take the nearest min(TopK, count) entries and keep those whose
// similarity is at least the threshold (a score equal to the threshold is
// kept), nearest first.
//
// # Defaults
//
// Go has no default arguments; Retrieve and SearchText take a *Search
// where nil means the defaults: TopK 3 (the original's) and a threshold
// that fits the embedder. The original's 0.6 is a neural embedder's scale;
// an embedder that states its own (embed.Calibrated, as the offline
// hashing embedder does: 0.05) sets the default threshold instead, so that
// the default returns related memories. A zero TopK also means 3, and a nil
// Threshold the default; set one with new(float32(x)) (new(float32(0))
// keeps everything). Every memory adapter takes its optional cutoff this
// way.
//
// # Retrieval
//
// A search is hybrid by default: the question's words (BM25 over the
// engine's full-text index) and its embedding are fused (mnemo.Query),
// and a match lifts the entries stored just before and after it in its
// own session (Options.Session, Options.Spread): entries of other
// sessions and scopes, however they interleave in the store, take
// nothing. Whatever the mode, a search embeds the question,
// so every hit has its real similarity and the threshold means the same
// in hybrid, vector and text mode: in text mode BM25 picks and orders the
// entries, and the threshold then drops those too far from the question
// by meaning.
//
// # Sharing
//
// Any number of Memory values, in one process or (on a server) in many,
// may use the same collections at once: every call reads and writes the
// store, with nothing cached. Each entry's storage position (which
// spreading reads, unless the entry brings its own) is reserved from the
// collection's sequence in the store (mnemo.Sequencer), so no two
// handles or processes give two entries one position. A call that returns an error changed nothing.
// Collections are marked as a tool memory's (KindTools, KindTexts), and
// another kind of memory that picks the same name is refused
// (mnemo.ErrCollectionKind); when another handle drops them, the next
// call creates them again, empty.
//
// # Text
//
// Any question or text with a non-space character is stored and searched,
// symbols and emoji alone ("?", "🙂") included, as in the original. Empty
// or whitespace-only text cannot be stored (ErrEmptyText: nothing could
// ever find it by meaning, while the original stores it); as a question
// for Retrieve or SearchText it finds nothing, with no error (the
// original returns what lies nearest to the embedding of "", which is
// rarely over the threshold).
package toolmem

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/item"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
	"github.com/mnemodb/mnemo/memory/scope"
	"github.com/mnemodb/mnemo/metrics"
)

// Entry is one tool-usage memory.
//
// # Tool arguments
//
// The original keeps "the exact arguments that worked". Store keeps
// ToolArgs as its JSON text, and Retrieve decodes that text with
// json.Decoder.UseNumber, so the ToolArgs of a retrieved entry hold these
// Go types, the same before and after the database is reopened:
//
//	JSON object  map[string]any
//	JSON array   []any
//	string       string
//	number       json.Number: the number's exact text ("5", "0.1", "9007199254740993")
//	true, false  bool
//	null         nil
//
// A number keeps its exact value, even an int64 beyond 2^53 that a
// float64 would round: read it with its Int64, Float64 or String method,
// or decode the arguments into a struct of your own with DecodeArgs. A nil
// ToolArgs comes back as an empty map. Entries stored by earlier versions
// kept their arguments as database metadata, where numbers were already
// float64; they come back as json.Number too, with that float64's text.
type Entry struct {
	ID            string         // NewEntryID() when empty on Store
	Question      string         // the natural-language question; embedded
	ToolName      string         // the tool that was called
	ToolArgs      map[string]any // the arguments that worked, as a JSON object (see above)
	ResultSummary string         // see Summarize
	Similarity    float32        // filled by Retrieve
	Timestamp     time.Time      // set to now (UTC) by Store when zero; persisted
	// Metadata is the caller's own (JSON-compatible values; Search.Where
	// filters on it). The keys tool_name, tool_args, result_summary and
	// timestamp, and the reserved mnemo.pos, mnemo.group, mnemo.session,
	// mnemo.expires, mnemo.history and mnemo.scope.*, are the memory's
	// (ErrInvalid).
	Metadata map[string]any
	// ExpiresAt, when not zero on Store, is when the entry expires;
	// zero means after Options.TTL (or never). Filled by reads.
	ExpiresAt time.Time
	// Session, when set on Store, is the entry's session instead of the
	// handle's (Options.Session). Filled by reads.
	Session string
	// Position, when set on Store, is the entry's place in its session
	// (a turn number, a time in milliseconds) for entries stored out of
	// order; nil means the order of storage. Give every entry of a
	// session a position, or none. Its magnitude is below 2^53. Filled
	// by reads, so an entry read and stored again keeps its place.
	Position *int64
	// Filled by reads: the entry's scope (Options.Scope of the handle
	// that stored it), and why Retrieve returned it (see Hit).
	Scope scope.Scope
	Why   Why
}

// Why says why a search returned an entry: Score ranks the hits (the
// fused score in hybrid mode, the similarity in vector mode, BM25 in text
// mode), VectorRank and TextRank are its ranks (from 1) among the
// candidates of the question's embedding and of its words, 0 when that
// side did not find it. An entry with neither was lifted by a match
// stored beside it (Spread).
type Why struct {
	Score                float64
	VectorRank, TextRank int
}

// Spread reports whether the entry was returned only for a match stored
// beside it.
func (w Why) Spread() bool { return w.VectorRank == 0 && w.TextRank == 0 }

// TextEntry is one text memory.
type TextEntry struct {
	ID         string
	Text       string
	Similarity float32     // filled by SearchText
	ExpiresAt  time.Time   // zero for never (see Entry)
	Session    string      // as Entry.Session
	Position   *int64      // as Entry.Position
	Scope      scope.Scope // filled by reads
	Why        Why         // filled by SearchText
}

// Search tunes Retrieve and SearchText; nil means the defaults.
type Search struct {
	TopK      int      // at most this many entries; 0 means DefaultTopK
	Threshold *float32 // minimum similarity, as new(float32(x)); nil means DefaultThreshold; NaN and infinities are ErrInvalid
	// Where filters by metadata in the engine's filter syntax
	// (mnemo.NewFilter), over an entry's Metadata and its tool_name,
	// result_summary and timestamp: {"tool_name": "get_weather"}. nil
	// admits every entry. It may not name a reserved key (mnemo.pos,
	// mnemo.group, mnemo.session, mnemo.expires, mnemo.history,
	// mnemo.scope.*).
	Where map[string]any
	// Scope, when set, reads that scope instead of the handle's;
	// AllScopes reads every scope (a cross-scope read, asked for).
	Scope     scope.Scope
	AllScopes bool
}

// Defaults of Search. DefaultThreshold is the original's, and applies
// to embedders that do not state their own scale (embed.Calibrated).
const (
	DefaultTopK      = 3
	DefaultThreshold = 0.6
)

// MaxArgsDepth is how deeply Entry.ToolArgs may nest objects and arrays:
// one level less than the database allows in a record's metadata.
const MaxArgsDepth = mnemo.MaxMetadataDepth - 1

// SummaryLength is the number of characters Summarize keeps.
const SummaryLength = 300

// Summarize returns the first 300 characters (runes, not bytes) of a tool
// result, for Entry.ResultSummary.
func Summarize(result string) string {
	if utf8.RuneCountInString(result) <= SummaryLength {
		return result
	}
	n := 0
	for i := range result {
		if n == SummaryLength {
			return result[:i]
		}
		n++
	}
	return result
}

// NewEntryID returns a new random UUID v4 string.
func NewEntryID() string { return uuid.NewString() }

// Options configure a Memory. nil means the defaults.
type Options struct {
	// Name prefixes the two collections; default "toolmem".
	Name string
	// Embedder; nil means the offline hashing embedder, which matches
	// words, not meaning (to choose it: e, err := embed.NewHashing(0)).
	Embedder embed.Embedder
	// Mode is how searches retrieve: mnemo.ModeHybrid (the default when
	// empty: words and embedding fused), mnemo.ModeVector or
	// mnemo.ModeText.
	Mode mnemo.Mode
	// Spread is the share of a match's score that the two entries
	// stored before it and the two after it in its session get, as
	// new(float32(x)) in [0, 1]; nil means 0.5 (chosen by measurement
	// on conversations), 0 turns it off.
	Spread *float32
	// Session is the session (a conversation, a task) of the entries
	// this handle stores without one of their own; "" is the handle's
	// scope's one unnamed session. A search lifts only the entries of a
	// match's own session, stored next to it (Spread). Sessions of two
	// scopes are two sessions.
	Session string
	// Scope is the handle's scope (package scope): every entry it stores
	// carries it and every read, Delete and Count sees only entries that
	// have it. nil reads every entry and stores unscoped ones.
	Scope scope.Scope
	// TTL, when positive, is how long an entry stored without its own
	// ExpiresAt lives; 0 means forever. Expired entries are never
	// returned.
	TTL time.Duration
	// SweepEvery is how often a background sweep deletes expired entries;
	// 0 means DefaultSweepEvery, negative no background sweep (call
	// Sweep).
	SweepEvery time.Duration
	// Clock returns the time expiry uses; nil means time.Now.
	Clock func() time.Time
	// Logger receives the memory's diagnostic messages (an older
	// embedder kept for a collection it made, say) and, for a memory
	// that Open opens in a database of its own, the engine's. Default:
	// discarded.
	Logger *slog.Logger
	// Metrics receives an embed event for every embedding the memory
	// asks for (see package metrics), and, for a memory that Open opens
	// in a database of its own, the engine's events; a database given
	// to New reports through the options it was opened with. Default
	// nil: off.
	Metrics metrics.Recorder
}

// DefaultSweepEvery is how often a Memory deletes expired entries in the
// background by default.
const DefaultSweepEvery = item.DefaultSweepEvery

// Memory is a tool-usage and text memory. It is safe for concurrent use by
// multiple goroutines.
type Memory struct {
	db           mnemo.Store
	ownDB        bool
	tools, texts *textvec.Bound
	space        *textvec.Space
	retrieval    textvec.Retrieval
	pol          item.Policy   // scope, TTL, clock
	session      string        // of the entries stored without one
	sweeper      *item.Sweeper // nil for none
}

// Kinds of the collections a Memory keeps (mnemo.CollectionConfig.Kind):
// opening another memory's collection fails with
// mnemo.ErrCollectionKind.
const (
	KindTools = "toolmem.tools"
	KindTexts = "toolmem.texts"
)

// New returns a memory in db, creating its collections if needed; ctx
// bounds that. db is any backend: an engine database the caller has open
// (engine.DB.Store) or a server (package postgres). The caller keeps
// ownership of db: Close leaves it open, so one database can hold every
// memory of an agent. A collection of the name that another kind of
// memory made is refused with mnemo.ErrCollectionKind.
func New(ctx context.Context, db mnemo.Store, opts *Options) (*Memory, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "toolmem"
	}
	r := textvec.Retrieval{Mode: o.Mode, Spread: o.Spread}
	if err := r.Check(ErrInvalid); err != nil {
		return nil, err
	}
	pol, err := item.NewPolicy(ErrInvalid, o.Scope, o.TTL, o.Clock)
	if err != nil {
		return nil, err
	}
	if err := (item.Place{Session: o.Session}).Check(ErrInvalid); err != nil {
		return nil, err
	}
	space, err := textvec.New(o.Embedder, ErrEmptyText, ErrInvalid, textvec.Observe{Logger: o.Logger, Metrics: o.Metrics})
	if err != nil {
		return nil, err
	}
	m := &Memory{db: db, space: space, retrieval: r, pol: pol, session: o.Session}
	if m.tools, err = space.Bind(ctx, db, o.Name+".tools", KindTools); err != nil {
		return nil, err
	}
	if m.texts, err = space.Bind(ctx, db, o.Name+".texts", KindTexts); err != nil {
		return nil, err
	}
	m.sweeper = item.StartSweeper(o.SweepEvery, m.Sweep)
	return m, nil
}

// Open opens (or creates) a memory in its own database in dir; an empty dir
// means in memory only. Close closes the database.
func Open(dir string, opts *Options) (*Memory, error) {
	db, err := textvec.OpenStore(dir, observe(opts))
	if err != nil {
		return nil, err
	}
	m, err := New(context.Background(), db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	m.ownDB = true
	return m, nil
}

// Close stops the background sweep and closes the database if Open
// opened it.
func (m *Memory) Close() error {
	m.sweeper.Stop()
	if m.ownDB {
		return m.db.Close()
	}
	return nil
}

// Store saves e, replacing any entry with the same ID. An empty ID gets a
// new one, and a zero Timestamp the current time; e is not modified (Store
// returns the ID used).
//
// ToolArgs must encode as JSON (encoding/json) and nest objects and arrays
// at most MaxArgsDepth levels deep (the arguments object itself is the
// first); deeper, self-containing or unencodable arguments (NaN, a func)
// are ErrInvalid, and nothing is stored. They are stored as their JSON
// text, so they come back exactly as they encode (see Entry).
func (m *Memory) Store(ctx context.Context, e Entry) (string, error) {
	v, err := m.space.Vector(ctx, "question", e.Question)
	if err != nil {
		return "", err
	}
	if e.ID == "" {
		e.ID = NewEntryID()
	}
	if e.Timestamp.IsZero() {
		e.Timestamp = time.Now().UTC()
	}
	args, err := encodeArgs(e.ToolArgs)
	if err != nil {
		return "", err
	}
	if err := checkMeta(e.Metadata); err != nil {
		return "", err
	}
	place, err := item.PlaceOf(ErrInvalid, e.Session, m.session, e.Position)
	if err != nil {
		return "", err
	}
	expires, err := m.pol.Expiry(ErrInvalid, 0, e.ExpiresAt)
	if err != nil {
		return "", err
	}
	meta := item.Stamp(e.Metadata, m.pol.Scope, expires)
	item.StampPlace(meta, m.pol.Scope, place, true)
	meta["tool_name"] = e.ToolName
	meta["tool_args"] = args
	meta["result_summary"] = e.ResultSummary
	meta["timestamp"] = e.Timestamp.Format(time.RFC3339Nano)
	rec := mnemo.Record{ID: e.ID, Vector: v, Content: e.Question, Metadata: meta}
	if len(m.pol.Scope) == 0 {
		if _, err := m.space.Insert(ctx, m.tools, rec); err != nil {
			return "", wrap(err)
		}
		return e.ID, nil
	}
	// A scoped handle replaces only its own entries, checked as it writes.
	id, err := m.space.InsertIf(ctx, m.tools, rec, func(exists bool, stored map[string]any) bool {
		return !exists || m.pol.InScope(stored)
	})
	if err != nil {
		return "", wrap(err)
	}
	if id == "" {
		return "", fmt.Errorf("%w: entry %q belongs to another scope", ErrInvalid, e.ID)
	}
	return e.ID, nil
}

// entryKeys are the metadata keys Store fills itself.
var entryKeys = []string{"tool_name", "tool_args", "result_summary", "timestamp"}

// checkMeta refuses caller metadata that sets a key the memory keeps.
func checkMeta(meta map[string]any) error {
	if err := item.CheckMeta(ErrInvalid, meta); err != nil {
		return err
	}
	for _, k := range entryKeys {
		if _, ok := meta[k]; ok {
			return fmt.Errorf("%w: metadata key %q is the entry's own", ErrInvalid, k)
		}
	}
	return nil
}

// wrap maps engine input errors to this package's; the engine's sentinel
// still matches too.
func wrap(err error) error {
	if errors.Is(err, mnemo.ErrInvalidID) || errors.Is(err, mnemo.ErrInvalidRecord) {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return err
}

// Retrieve returns up to TopK tool entries whose questions are most
// similar to question, nearest first, keeping those at or above the
// threshold (see the package doc).
func (m *Memory) Retrieve(ctx context.Context, question string, s *Search) ([]Entry, error) {
	hits, err := m.search(ctx, m.tools, question, s)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(hits))
	for _, h := range hits {
		e := entryOf(h.Record)
		e.Similarity = similarity(h)
		e.Why = Why{Score: h.Score, VectorRank: h.VectorRank, TextRank: h.TextRank}
		out = append(out, e)
	}
	return out, nil
}

// entryOf decodes a tool entry's record.
func entryOf(r mnemo.Record) Entry {
	meta := r.Metadata
	e := Entry{ID: r.ID, Question: r.Content, ExpiresAt: item.Expires(meta), Session: item.Session(meta),
		Position: item.Position(meta), Scope: scope.FromMetadata(meta)}
	e.ToolName, _ = meta["tool_name"].(string)
	e.ToolArgs = decodeArgs(meta["tool_args"])
	e.ResultSummary, _ = meta["result_summary"].(string)
	if ts, ok := meta["timestamp"].(string); ok {
		e.Timestamp, _ = time.Parse(time.RFC3339Nano, ts)
	}
	if own := item.Strip(meta); own != nil {
		for _, k := range entryKeys {
			delete(own, k)
		}
		if len(own) > 0 {
			e.Metadata = own
		}
	}
	return e
}

// Get returns the tool entry with the given ID; ok is false when the
// handle cannot see it (absent, expired or of another scope).
func (m *Memory) Get(ctx context.Context, id string) (Entry, bool, error) {
	var r mnemo.Record
	var ok bool
	err := m.tools.Do(ctx, func(c mnemo.Collection) error {
		var err error
		r, ok, err = c.Get(ctx, id)
		return err
	})
	if err != nil || !ok || !m.pol.Visible(r.Metadata) {
		return Entry{}, false, wrap(err)
	}
	return entryOf(r), true, nil
}

func similarity(h mnemo.Hit) float32 { return max(0, h.Similarity) }

// search runs a thresholded query over c.
func (m *Memory) search(ctx context.Context, c *textvec.Bound, query string, s *Search) ([]mnemo.Hit, error) {
	var o Search
	if s != nil {
		o = *s
	}
	if o.TopK < 0 {
		return nil, fmt.Errorf("%w: TopK %d", ErrInvalid, o.TopK)
	}
	if o.TopK == 0 {
		o.TopK = DefaultTopK
	}
	if err := textvec.CheckCutoff(ErrInvalid, "threshold", o.Threshold, math.Inf(-1), math.Inf(1)); err != nil {
		return nil, err
	}
	threshold := m.DefaultThreshold()
	if o.Threshold != nil {
		threshold = *o.Threshold
	}
	if strings.TrimSpace(query) == "" {
		return nil, nil // nothing to match (see Text in the package doc)
	}
	f, err := m.pol.Read(ErrInvalid, o.Scope, o.AllScopes, o.Where)
	if err != nil {
		return nil, err
	}
	hits, err := m.space.Query(ctx, c, m.retrieval, query, o.TopK, f, nil)
	if err != nil {
		return nil, err
	}
	kept := hits[:0]
	for _, h := range hits {
		if similarity(h) >= threshold {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// DefaultThreshold returns the threshold a search without one applies:
// the embedder's own (embed.Calibrated), or DefaultThreshold.
func (m *Memory) DefaultThreshold() float32 {
	if c, ok := m.space.Embedder().(embed.Calibrated); ok {
		return c.RelatedSimilarity()
	}
	return DefaultThreshold
}

// Delete removes the tool entry with the given ID; an absent ID, or one
// of another scope, is a no-op.
func (m *Memory) Delete(ctx context.Context, id string) error {
	return m.delete(ctx, m.tools, id)
}

// DeleteText removes the text memory with the given ID (see Delete).
func (m *Memory) DeleteText(ctx context.Context, id string) error {
	return m.delete(ctx, m.texts, id)
}

func (m *Memory) delete(ctx context.Context, b *textvec.Bound, id string) error {
	err := b.Do(ctx, func(c mnemo.Collection) error {
		_, err := textvec.DeleteIf(ctx, c, m.pol.InScope, id)
		return err
	})
	return wrap(err)
}

// SaveText saves a text memory and returns its new ID.
func (m *Memory) SaveText(ctx context.Context, text string) (string, error) {
	return m.SaveTextWith(ctx, TextEntry{Text: text})
}

// SaveTextWith saves a text memory with its expiry (TextEntry.ExpiresAt;
// zero means after Options.TTL, or never), session and position, and
// returns its new ID; the other fields are ignored.
func (m *Memory) SaveTextWith(ctx context.Context, e TextEntry) (string, error) {
	place, err := item.PlaceOf(ErrInvalid, e.Session, m.session, e.Position)
	if err != nil {
		return "", err
	}
	v, err := m.space.Vector(ctx, "text", e.Text)
	if err != nil {
		return "", err
	}
	expires, err := m.pol.Expiry(ErrInvalid, 0, e.ExpiresAt)
	if err != nil {
		return "", err
	}
	meta := item.Stamp(nil, m.pol.Scope, expires)
	item.StampPlace(meta, m.pol.Scope, place, true)
	id, err := m.space.Insert(ctx, m.texts, mnemo.Record{Vector: v, Content: e.Text, Metadata: meta})
	if err != nil {
		return "", wrap(err)
	}
	return id, nil
}

// SearchText returns up to TopK text memories most similar to query (see
// Retrieve).
func (m *Memory) SearchText(ctx context.Context, query string, s *Search) ([]TextEntry, error) {
	hits, err := m.search(ctx, m.texts, query, s)
	if err != nil {
		return nil, err
	}
	out := make([]TextEntry, len(hits))
	for i, h := range hits {
		meta := h.Record.Metadata
		out[i] = TextEntry{ID: h.Record.ID, Text: h.Record.Content, Similarity: similarity(h),
			ExpiresAt: item.Expires(meta), Session: item.Session(meta), Position: item.Position(meta), Scope: scope.FromMetadata(meta),
			Why: Why{Score: h.Score, VectorRank: h.VectorRank, TextRank: h.TextRank}}
	}
	return out, nil
}

// Count returns the number of tool entries the handle sees (text
// memories are not counted, as in the original): those of its scope, not
// expired. O(entries): a scan reads each entry's scope and expiry.
func (m *Memory) Count(ctx context.Context) (int, error) {
	st, err := m.Stats(ctx)
	return st.Tools, err
}

// Stats counts a handle's entries: those of its scope, live and expired
// (not yet swept).
type Stats struct {
	Tools, Texts int // live entries, the ones reads return
	Expired      int // expired tool entries and texts a sweep has not deleted yet
}

// Stats counts the entries of the handle's scope. O(entries).
func (m *Memory) Stats(ctx context.Context) (Stats, error) {
	tools, ex1, err := m.pol.Count(ctx, m.tools)
	if err != nil {
		return Stats{}, err
	}
	texts, ex2, err := m.pol.Count(ctx, m.texts)
	return Stats{Tools: tools, Texts: texts, Expired: ex1 + ex2}, err
}

// Sweep deletes the expired entries and texts of the handle's scope
// (every scope's, without one) and returns how many it deleted. Expired
// entries are never returned, swept or not; the background sweep
// (Options.SweepEvery) calls Sweep. O(entries).
func (m *Memory) Sweep(ctx context.Context) (int, error) {
	n1, err := m.pol.Sweep(ctx, m.tools)
	if err != nil {
		return n1, err
	}
	n2, err := m.pol.Sweep(ctx, m.texts)
	return n1 + n2, err
}

// observe returns the logging and metrics of opts (which may be nil).
func observe(opts *Options) textvec.Observe {
	if opts == nil {
		return textvec.Observe{}
	}
	return textvec.Observe{Logger: opts.Logger, Metrics: opts.Metrics}
}
