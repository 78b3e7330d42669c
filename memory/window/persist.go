package window

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"weak"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/backend"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
)

// Persistence and recall.
//
// A stored window (NewStored on a database the caller owns, OpenStored on
// one it opens and owns) keeps every message in an engine collection
// ("<session>.messages", one record per message, IDs in recording order),
// so an agent that restarts resumes its conversation, protected
// instructions included. With Options.Recall, each round is also embedded into
// "<session>.rounds"; Context then spends Options.RecallShare of the budget on
// the evicted rounds most relevant to the newest user message, as one
// system message (starting with RecallHeader) placed after the leading
// system messages (the system prompt), before the rest of the kept
// rounds. New with Recall keeps the rounds in an in-memory database.
//
// A session is open in one window at a time: each window numbers its
// messages from its own counter, so two windows on one session would
// overwrite each other's messages. NewStored registers the session (keyed
// by the database and the name) until the window's Close, and fails with
// ErrSessionOpen meanwhile. The registry is per process; another process
// cannot open the database at all while this one has it open.

// RecallHeader starts the system message that carries recalled rounds.
const RecallHeader = "Recalled from earlier in this conversation:"

// store is a window's engine backing.
type store struct {
	db       backend.Store
	ownDB    bool
	session  *sessionKey        // nil unless stored (NewStored)
	messages backend.Collection // nil for a New window with recall only
	rounds   backend.Collection // nil without recall
	space    *textvec.Space     // nil without recall
}

// sessionKey names a persistent session: a database and a name. An
// engine database is held weakly, so a session left open (its window
// never closed) does not keep a database the program has dropped in
// memory; another store (a server's) is held until the window closes.
type sessionKey struct {
	db    weak.Pointer[engine.DB]
	store backend.Store // when the store is not an engine database
	name  string
}

// keyOf returns the session key of name in db.
func keyOf(db backend.Store, name string) sessionKey {
	if e, ok := backend.EngineDB(db); ok {
		return sessionKey{db: weak.Make(e), name: name}
	}
	return sessionKey{store: db, name: name}
}

// sessions holds the sessions open in this process.
var sessions struct {
	sync.Mutex
	open map[sessionKey]bool
}

// acquire registers s as open, or fails with ErrSessionOpen.
func acquire(s sessionKey) error {
	sessions.Lock()
	defer sessions.Unlock()
	if sessions.open[s] {
		return fmt.Errorf("%w: %q on this database (close its window first)", ErrSessionOpen, s.name)
	}
	if sessions.open == nil {
		sessions.open = map[sessionKey]bool{}
	}
	for k := range sessions.open {
		if k.store == nil && k.db.Value() == nil { // the database was garbage collected
			delete(sessions.open, k)
		}
	}
	sessions.open[s] = true
	return nil
}

// release unregisters s.
func release(s sessionKey) {
	sessions.Lock()
	defer sessions.Unlock()
	delete(sessions.open, s)
}

// maxSession bounds a session name, which names the session's collections
// (the engine allows 256 bytes in a collection name; ".messages" is added).
const maxSession = 200

// NewStored returns a window whose messages persist in db under session,
// loading any recorded before. The caller keeps ownership of db: Close
// releases the session and leaves db open, so one database can hold every
// memory of an agent. A session is open in one window at a time: while
// one window has it, NewStored of the same session on the same db fails
// with ErrSessionOpen.
func NewStored(db *engine.DB, session string, budget int, opts *Options) (*Window, error) {
	return NewStoredIn(backend.Embedded(db), session, budget, opts)
}

// NewStoredIn is NewStored in db, the embedded engine or a server such as
// package postgres provides. The session registry is per process: on a
// server, two processes can open one session at once, and each should
// have its own.
func NewStoredIn(db backend.Store, session string, budget int, opts *Options) (*Window, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	if session == "" || !utf8.ValidString(session) || len(session) > maxSession {
		return nil, fmt.Errorf("%w: session name %q: want 1 to %d bytes of UTF-8", ErrInvalid, session, maxSession)
	}
	w, err := New(budget, opts)
	if err != nil {
		return nil, err
	}
	if w.st == nil {
		w.st = &store{db: db}
	} else {
		// New made an in-memory database for recall; use db instead.
		w.st.db.Close()
		w.st.db, w.st.ownDB = db, false
	}
	s := keyOf(db, session)
	if err := acquire(s); err != nil {
		return nil, err
	}
	if err := w.open(session); err != nil {
		release(s)
		return nil, err
	}
	w.st.session = &s
	return w, nil
}

// OpenStored opens (or creates) a database in dir (an empty dir means in
// memory only) and returns NewStored's window on it. Close closes the
// database.
func OpenStored(dir, session string, budget int, opts *Options) (*Window, error) {
	db, err := textvec.OpenStore(dir)
	if err != nil {
		return nil, err
	}
	w, err := NewStoredIn(db, session, budget, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	w.st.ownDB = true
	return w, nil
}

// open creates or loads the session's collections. The caller is
// NewStored.
func (w *Window) open(name string) error {
	var err error
	db := w.st.db
	if w.st.messages, err = db.CreateCollection(context.Background(), name+".messages", engine.CollectionConfig{Dimension: 1, Metric: engine.L2, Index: engine.Flat}); err != nil {
		return err
	}
	if w.recall {
		if w.st.rounds, err = w.st.roundCollection(name); err != nil {
			return err
		}
	}
	if err := w.load(); err != nil {
		return err
	}
	// A session stored before tool results had to follow their calls may
	// hold rounds that rounds now joins (see toolcalls.go); its recall
	// index numbered them apart and is rebuilt.
	split := 0
	for i, e := range w.msgs {
		if i == 0 || e.m.Role == User {
			split++
		}
	}
	if w.recall && split != len(w.rounds()) {
		return w.reindex(context.Background(), split)
	}
	return nil
}

func (s *store) roundCollection(name string) (backend.Collection, error) {
	return s.space.Collection(context.Background(), s.db, name+".rounds")
}

// errNothing marks a text with nothing to embed: such a round is not
// indexed, and such a query recalls nothing.
var errNothing = errors.New("window: nothing to embed")

// newRecallStore is the in-memory backing of New with recall.
func newRecallStore(space *textvec.Space) (*store, error) {
	db, err := backend.OpenEmbedded("", &engine.Options{InMemory: true})
	if err != nil {
		return nil, err
	}
	s := &store{db: db, ownDB: true, space: space}
	if s.rounds, err = s.roundCollection("window"); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the window: the session of a stored window, which
// another NewStored may then take; the database of a window made by
// OpenStored, or by New with recall (a NewStored window leaves its
// database open: it belongs to the caller). After Close, Record, RecordProtected and Context fail with
// ErrClosed; a second Close does nothing.
func (w *Window) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.st == nil {
		return nil
	}
	if w.st.session != nil {
		release(*w.st.session)
	}
	if w.st.ownDB {
		return w.st.db.Close()
	}
	return nil
}

// persist writes message number seq. The caller holds w.mu.
func (w *Window) persist(ctx context.Context, seq int, e entry) error {
	if w.st == nil || w.st.messages == nil {
		return nil
	}
	_, err := w.st.messages.Upsert(ctx, messageRecord(seq, e))
	return err
}

// persistAll replaces the stored messages with es: es are written in one
// batch, then every stored message after them deleted. written reports
// whether es were, even when deleting failed. The caller holds w.mu.
func (w *Window) persistAll(ctx context.Context, es []entry) (written bool, err error) {
	if w.st == nil || w.st.messages == nil {
		return true, nil
	}
	recs := make([]engine.Record, len(es))
	for i, e := range es {
		recs[i] = messageRecord(i, e)
	}
	if _, err := w.st.messages.Upsert(ctx, recs...); err != nil {
		return false, err
	}
	// Delete every stored message past the new ones: found by scanning
	// what is stored, not by the count in memory, so that a surplus a
	// failed delete left behind goes with the next success.
	after := ""
	if len(es) > 0 {
		after = messageID(len(es) - 1)
	}
	for {
		page, next, err := w.st.messages.Scan(ctx, after, 1000)
		if err == nil && len(page) > 0 {
			ids := make([]string, len(page))
			for i, r := range page {
				ids[i] = r.ID
			}
			_, err = w.st.messages.Delete(ctx, ids...)
		}
		if err != nil {
			return true, fmt.Errorf("window: delete the replaced messages: %w", err)
		}
		if next == "" {
			return true, nil
		}
		after = next
	}
}

func messageID(seq int) string { return fmt.Sprintf("%012d", seq) }

func messageRecord(seq int, e entry) engine.Record {
	calls, _ := json.Marshal(e.m.ToolCalls)
	meta := map[string]any{"role": string(e.m.Role), "reasoning": e.m.Reasoning, "tool_calls": string(calls),
		"tool_call_id": e.m.ToolCallID, "protected": e.protected}
	return engine.Record{ID: messageID(seq), Vector: []float32{1}, Content: e.m.Content, Metadata: meta}
}

// load reads the recorded messages back. The caller is NewStored.
func (w *Window) load() error {
	after := ""
	for {
		page, next, err := w.st.messages.Scan(context.Background(), after, 1000)
		if err != nil {
			return err
		}
		for _, r := range page {
			m := Message{Content: r.Content}
			role, _ := r.Metadata["role"].(string)
			m.Role = Role(role)
			m.Reasoning, _ = r.Metadata["reasoning"].(string)
			m.ToolCallID, _ = r.Metadata["tool_call_id"].(string)
			if calls, _ := r.Metadata["tool_calls"].(string); calls != "" && calls != "null" {
				if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
					return fmt.Errorf("window: stored message %s: %v", r.ID, err)
				}
			}
			m.Protected, _ = r.Metadata["protected"].(bool)
			if w.calls.add(m) {
				w.separated = true
			}
			w.msgs = append(w.msgs, entry{m, m.Protected, w.counter(m)})
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// indexRound (re-)embeds round i after a message joined it. The caller
// holds w.mu.
func (w *Window) indexRound(ctx context.Context, rs []round, i int) error {
	if !w.recall {
		return nil
	}
	v, err := w.st.space.Vector(ctx, "round", w.roundText(rs[i]))
	if errors.Is(err, errNothing) {
		return nil // nothing searchable in this round (yet)
	}
	if err != nil {
		return err
	}
	_, err = w.st.rounds.Upsert(ctx, roundRecord(i, v, w.roundText(rs[i])))
	return err
}

// reindex re-embeds every round after the messages were replaced, in one
// batch, and deletes the stale ones (the window had old rounds before).
// The caller holds w.mu.
func (w *Window) reindex(ctx context.Context, old int) error {
	if !w.recall {
		return nil
	}
	rs := w.rounds()
	var recs []engine.Record
	var stale []string
	for i, r := range rs {
		v, err := w.st.space.Vector(ctx, "round", w.roundText(r))
		if errors.Is(err, errNothing) {
			stale = append(stale, strconv.Itoa(i))
			continue
		}
		if err != nil {
			return err
		}
		recs = append(recs, roundRecord(i, v, w.roundText(r)))
	}
	for i := len(rs); i < old; i++ {
		stale = append(stale, strconv.Itoa(i))
	}
	if _, err := w.st.rounds.Upsert(ctx, recs...); err != nil {
		return err
	}
	if len(stale) > 0 {
		_, err := w.st.rounds.Delete(ctx, stale...)
		return err
	}
	return nil
}

// roundRecord is round i's record in the recall index: its text for the
// full-text side, its number for the filter and for neighbour spreading.
func roundRecord(i int, v []float32, text string) engine.Record {
	return engine.Record{ID: strconv.Itoa(i), Vector: v, Content: text, Metadata: map[string]any{"round": i, textvec.PosField: i}}
}

// roundText renders a round as "role: content" lines.
func (w *Window) roundText(r round) string {
	var b strings.Builder
	for _, e := range w.msgs[r.start:r.end] {
		if e.m.Content == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", e.m.Role, e.m.Content)
	}
	return strings.TrimRight(b.String(), "\n")
}

// recalled picks, among the evicted rounds, the ones most relevant to the
// newest user message that fit in budget tokens, and renders them as one
// system message (ok false when none). The caller holds w.mu.
func (w *Window) recalled(ctx context.Context, rs []round, evicted []int, budget int) (Message, bool, error) {
	var query string
	for i := len(w.msgs) - 1; i >= 0; i-- {
		if w.msgs[i].m.Role == User {
			query = w.msgs[i].m.Content
			break
		}
	}
	if query == "" || len(evicted) == 0 || budget <= 0 {
		return Message{}, false, nil
	}
	in := make([]any, len(evicted))
	for i, r := range evicted {
		in[i] = r
	}
	f, err := engine.NewFilter(map[string]any{"round": map[string]any{"$in": in}})
	if err != nil {
		return Message{}, false, err
	}
	// Hybrid: the query's words and embedding fused, a matching round
	// lifting the rounds beside it (see Options.Recall).
	hits, err := w.st.space.Search(ctx, w.st.rounds, textvec.Retrieval{}, query, len(evicted), f, nil)
	if errors.Is(err, errNothing) {
		return Message{}, false, nil
	}
	if err != nil {
		return Message{}, false, err
	}
	header := Message{Role: System, Content: RecallHeader}
	used := w.counter(header)
	var picked []int
	for _, h := range hits {
		i, _ := strconv.Atoi(h.Record.ID)
		cost := w.counter(Message{Content: w.roundText(rs[i])})
		if used+cost > budget {
			continue
		}
		used += cost
		picked = append(picked, i)
	}
	if len(picked) == 0 {
		return Message{}, false, nil
	}
	slices.Sort(picked) // chronological inside the block
	parts := []string{RecallHeader}
	for _, i := range picked {
		parts = append(parts, w.roundText(rs[i]))
	}
	return Message{Role: System, Content: strings.Join(parts, "\n\n")}, true, nil
}
