package window

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/internal/textvec"
)

// Persistence and recall.
//
// A stored window (NewStored on a database the caller owns, OpenStored on
// one it opens and owns) keeps every message in an engine collection
// ("<session>.messages", one record per message, IDs in recording order),
// so an agent that restarts resumes its conversation, protected
// instructions included. With Options.Recall, each round is also embedded into
// "<session>.rounds"; Context then keeps rounds within the budget less
// Options.RecallShare of it and spends the rest on the evicted rounds most
// relevant to the newest user message, as one system message (starting
// with RecallHeader) placed after the leading system messages (the system
// prompt), before the rest of the kept rounds. The rules:
//
//   - a round is recalled only when its similarity to the newest user
//     message reaches Options.MinSimilarity;
//   - the header counts against the budget; the recall block has what the
//     kept rounds leave, the share at least;
//   - rounds are recalled in ranking order while they fit; until one is,
//     a relevant round that does not fit takes the room of the oldest
//     kept rounds (never the newest round or a protected one), so the
//     most relevant round that can fit in the budget is the one recalled;
//   - when nothing is recalled the kept rounds get the whole budget.
//
// ContextReport says which rounds were kept, recalled and passed over,
// and why. New with Recall keeps the rounds in an in-memory database.
//
// A session is open in one window at a time, in every process: each
// window numbers its messages from its own counter, so two windows on one
// session would overwrite each other's messages. NewStored takes the
// session's lock (mnemo.TryLock: on the embedded engine a lock in this
// process, which is the only one that can open the database; on
// PostgreSQL a server-side advisory lock, which every process sees) until
// the window's Close, and fails with ErrSessionOpen meanwhile.
//
// The messages are the truth; the recall index is derived from them. A
// call that returns an error stored nothing. When the messages were
// stored but updating the recall index failed (the embedder or the server
// failed, or the index collection was dropped), the call still returns
// nil and the rounds concerned wait to be re-indexed by the next Record,
// SetMessages or Context; opening a session compares every round's entry
// with its messages and re-indexes those that differ, so a crash between
// the two writes never leaves a stale entry behind.

// RecallHeader starts the system message that carries recalled rounds.
const RecallHeader = "Recalled from earlier in this conversation:"

// store is a window's engine backing.
type store struct {
	db       mnemo.Store
	ownDB    bool
	session  mnemo.Lock       // nil unless stored (NewStored)
	messages mnemo.Collection // nil for a New window with recall only
	rounds   *textvec.Bound   // nil without recall
	space    *textvec.Space   // nil without recall
}

// Kinds of a window's collections (mnemo.CollectionConfig.Kind).
const (
	KindMessages = "window.messages"
	KindRounds   = "window.rounds"
)

// maxSession bounds a session name, which names the session's collections
// (the engine allows 256 bytes in a collection name; ".messages" is added).
const maxSession = 200

// NewStored returns a window whose messages persist in db under session,
// loading any recorded before; ctx bounds the loading. db is any backend:
// an engine database the caller has open (engine.DB.Store) or a server
// (package postgres). The caller keeps ownership of db: Close releases
// the session and leaves db open, so one database can hold every memory
// of an agent. A session is open in one window at a time, in every
// process: while a window anywhere has it, NewStored of the same session
// fails with ErrSessionOpen (on a server, naming the server process that
// holds it).
func NewStored(ctx context.Context, db mnemo.Store, session string, budget int, opts *Options) (*Window, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	if err := checkSession(session); err != nil {
		return nil, err
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
	lock, err := mnemo.TryLock(ctx, db, "window.session/"+session)
	if errors.Is(err, mnemo.ErrLockHeld) {
		return nil, fmt.Errorf("%w: %w", ErrSessionOpen, err)
	}
	if err != nil {
		return nil, err
	}
	if err := w.open(ctx, session); err != nil {
		lock.Unlock()
		return nil, err
	}
	w.st.session = lock
	return w, nil
}

// OpenStored opens (or creates) a database in dir (an empty dir means in
// memory only) and returns NewStored's window on it. Close closes the
// database.
func OpenStored(dir, session string, budget int, opts *Options) (*Window, error) {
	var obs textvec.Observe
	if opts != nil {
		obs = textvec.Observe{Logger: opts.Logger, Metrics: opts.Metrics}
	}
	db, err := textvec.OpenStore(dir, obs)
	if err != nil {
		return nil, err
	}
	w, err := NewStored(context.Background(), db, session, budget, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	w.st.ownDB = true
	return w, nil
}

// open creates or loads the session's collections, and repairs the
// recall index. The caller is NewStored.
func (w *Window) open(ctx context.Context, name string) error {
	var err error
	cfg := mnemo.CollectionConfig{Dimension: 1, Metric: mnemo.L2, Index: mnemo.Flat}
	if w.st.messages, err = textvec.Open(ctx, w.st.db, name+".messages", KindMessages, cfg); err != nil {
		return err
	}
	if w.recall {
		if w.st.rounds, err = w.st.roundCollection(ctx, name); err != nil {
			return err
		}
		w.st.rounds.OnReopen = func() { w.staleAll = true }
	}
	if err := w.load(ctx); err != nil {
		return err
	}
	// Compare every round's entry with its messages: a crash between
	// storing a message and re-indexing its round, a failed index write
	// before it, or a session stored before tool results had to follow
	// their calls (see toolcalls.go) leaves entries to re-index. A failure
	// here leaves them for the next call.
	w.staleAll = true
	w.repair(ctx)
	return nil
}

func (s *store) roundCollection(ctx context.Context, name string) (*textvec.Bound, error) {
	return s.space.Bind(ctx, s.db, name+".rounds", KindRounds)
}

// errNothing marks a text with nothing to embed: such a round is not
// indexed, and such a query recalls nothing.
var errNothing = errors.New("window: nothing to embed")

// newRecallStore is the in-memory backing of New with recall.
func newRecallStore(space *textvec.Space, obs textvec.Observe) (*store, error) {
	db, err := engine.OpenStore("", &engine.Options{InMemory: true, Logger: obs.Logger, Metrics: obs.Metrics})
	if err != nil {
		return nil, err
	}
	s := &store{db: db, ownDB: true, space: space}
	if s.rounds, err = s.roundCollection(context.Background(), "window"); err != nil {
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
	w.mu.Lock(context.Background())
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.st == nil {
		return nil
	}
	if w.st.session != nil {
		w.st.session.Unlock()
	}
	if w.st.ownDB {
		return w.st.db.Close()
	}
	return nil
}

// persist writes message number seq, after finishing a trim a
// SetMessages left. The caller holds w.mu.
func (w *Window) persist(ctx context.Context, seq int, e entry) error {
	if w.st == nil || w.st.messages == nil {
		return nil
	}
	if w.trimPending {
		if err := w.trim(ctx, seq); err != nil {
			return w.unsure(err)
		}
	}
	_, err := w.st.messages.Upsert(ctx, messageRecord(seq, e))
	return w.unsure(err)
}

// writable checks, before a write, that a stored window may write: that the
// session's lock is still held (on a server, the connection holding it may
// have ended, and another window taken the session since), and that the
// window holds what is stored (after a write whose outcome was unknown,
// it reads the session again first). The caller holds w.mu.
func (w *Window) writable(ctx context.Context) error {
	if w.st == nil {
		return nil
	}
	if w.lost != nil {
		return w.lost
	}
	if w.st.session != nil {
		err := w.st.session.Check(ctx)
		if errors.Is(err, mnemo.ErrLockLost) {
			w.lost = fmt.Errorf("%w: %w", ErrSessionLost, err)
			return w.lost
		}
		if err != nil {
			return err
		}
	}
	return w.resync(ctx)
}

// unsure notes that a write failed with err: on a server, a write whose
// reply was lost (a deadline, a broken connection) may have been stored
// all the same, so the window reads the session again before its next
// call (resync). It returns err.
func (w *Window) unsure(err error) error {
	if err != nil {
		w.reload = true
	}
	return err
}

// resync reads the stored session again when a write's outcome was
// unknown, so that the window holds exactly what is stored (a trim a
// SetMessages left is finished, the recall index checked). The caller
// holds w.mu.
func (w *Window) resync(ctx context.Context) error {
	if !w.reload || w.st == nil || w.st.messages == nil {
		return nil
	}
	msgs, calls, separated := w.msgs, w.calls, w.separated
	w.msgs, w.calls, w.separated, w.trimPending = nil, newToolCalls(), false, false
	if err := w.load(ctx); err != nil {
		w.msgs, w.calls, w.separated = msgs, calls, separated
		return err
	}
	w.reload, w.staleAll = false, true
	return nil
}

// persistAll replaces the stored messages with es, atomically as far as
// a reader (or a crash) can tell: es are written in one batch together
// with a trim marker that records their number, then the stored messages
// past them are deleted, then the marker. A session loaded while the
// marker is there (the deletes failed, or a crash cut them short) shows
// only the messages the marker counts, and finishes the deletes. written
// reports whether es were written; when the deletes then failed, they are
// finished before the next message is stored (w.trimPending). The caller
// holds w.mu.
func (w *Window) persistAll(ctx context.Context, es []entry) (written bool, err error) {
	if w.st == nil || w.st.messages == nil {
		return true, nil
	}
	recs := make([]mnemo.Record, len(es), len(es)+1)
	for i, e := range es {
		recs[i] = messageRecord(i, e)
	}
	recs = append(recs, trimRecord(len(es)))
	if _, err := w.st.messages.Upsert(ctx, recs...); err != nil {
		return false, w.unsure(err)
	}
	w.trimPending = true
	return true, w.trim(ctx, len(es))
}

// trimID is the ID of the trim marker: after every message ID (twelve
// digits) in byte order.
const trimID = "~trim"

func trimRecord(n int) mnemo.Record {
	return mnemo.Record{ID: trimID, Vector: []float32{1}, Metadata: map[string]any{"length": n}}
}

// trim deletes every stored message from number n on, then the trim
// marker. The caller holds w.mu.
func (w *Window) trim(ctx context.Context, n int) error {
	after := ""
	if n > 0 {
		after = messageID(n - 1)
	}
	err := textvec.ScanPages(ctx, w.st.messages, after, func(page []mnemo.Record) error {
		ids := make([]string, 0, len(page))
		for _, r := range page {
			if r.ID != trimID {
				ids = append(ids, r.ID)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		_, err := w.st.messages.Delete(ctx, ids...)
		return err
	})
	if err != nil {
		return fmt.Errorf("window: delete the replaced messages: %w", err)
	}
	if _, err := w.st.messages.Delete(ctx, trimID); err != nil {
		return fmt.Errorf("window: delete the replaced messages: %w", err)
	}
	w.trimPending = false
	return nil
}

func messageID(seq int) string { return fmt.Sprintf("%012d", seq) }

func messageRecord(seq int, e entry) mnemo.Record {
	calls, _ := json.Marshal(e.m.ToolCalls)
	meta := map[string]any{"role": string(e.m.Role), "reasoning": e.m.Reasoning, "tool_calls": string(calls),
		"tool_call_id": e.m.ToolCallID, "protected": e.protected}
	return mnemo.Record{ID: messageID(seq), Vector: []float32{1}, Content: e.m.Content, Metadata: meta}
}

// load reads the recorded messages back: those a trim marker counts when
// there is one (a SetMessages that did not finish), whose trim it then
// finishes. The caller is NewStored.
func (w *Window) load(ctx context.Context) error {
	limit := -1
	marker, ok, err := w.st.messages.Get(ctx, trimID)
	if err != nil {
		return err
	}
	if ok {
		n, _ := marker.Metadata["length"].(float64)
		limit = int(n)
	}
	err = textvec.ScanPages(ctx, w.st.messages, "", func(page []mnemo.Record) error {
		for _, r := range page {
			if r.ID == trimID || limit >= 0 && len(w.msgs) >= limit {
				continue
			}
			m, err := decodeMessage(r)
			if err != nil {
				return err
			}
			if w.calls.add(m) {
				w.separated = true
			}
			w.msgs = append(w.msgs, entry{m, m.Protected, w.counter(m)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if limit >= 0 {
		w.trimPending = true
		w.trim(ctx, limit) // what fails is finished before the next message is stored
	}
	return nil
}

// decodeMessage returns the message a record of a session's messages
// collection holds (see messageRecord).
func decodeMessage(r mnemo.Record) (Message, error) {
	m := Message{Content: r.Content}
	role, _ := r.Metadata["role"].(string)
	m.Role = Role(role)
	m.Reasoning, _ = r.Metadata["reasoning"].(string)
	m.ToolCallID, _ = r.Metadata["tool_call_id"].(string)
	if calls, _ := r.Metadata["tool_calls"].(string); calls != "" && calls != "null" {
		if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
			return Message{}, fmt.Errorf("window: stored message %s: %v", r.ID, err)
		}
	}
	m.Protected, _ = r.Metadata["protected"].(bool)
	return m, nil
}

// repair brings the recall entries of the rounds in w.stale (every round
// when w.staleAll) up to date with their messages, and deletes entries of
// rounds that no longer exist. What fails stays stale for the next call;
// the error is returned for callers that want it. The caller holds w.mu,
// or is open, before the window is shared. Only an entry's text is
// compared: its vector is the embedding of that text by the collection's
// embedder, which the collection's config pins.
func (w *Window) repair(ctx context.Context) error {
	if !w.recall || (!w.staleAll && len(w.stale) == 0) {
		return nil
	}
	rs := w.rounds()
	err := w.st.rounds.Do(ctx, func(c mnemo.Collection) error {
		if w.staleAll { // set by OnReopen too, before Do's second try
			return w.sync(ctx, c, rs)
		}
		return w.reindex(ctx, c, rs)
	})
	if err != nil {
		w.log.Warn("window: recall index not repaired; a later call tries again", "stale_rounds", len(w.stale), "all", w.staleAll, "err", err)
		return err
	}
	w.staleAll, w.stale = false, nil
	return nil
}

// sync compares every entry of c with the rounds rs and rewrites those
// that differ, in one batch. The caller holds w.mu.
func (w *Window) sync(ctx context.Context, c mnemo.Collection, rs []round) error {
	have := map[string]string{}
	err := textvec.ScanPages(ctx, c, "", func(page []mnemo.Record) error {
		for _, r := range page {
			have[r.ID] = r.Content
		}
		return nil
	})
	if err != nil {
		return err
	}
	want := map[int]bool{}
	for i, r := range rs {
		if text, ok := have[strconv.Itoa(i)]; !ok || text != w.roundText(r) {
			want[i] = true
		}
	}
	var drop []string // entries of no round (a shorter history, rounds merged)
	for id := range have {
		if i, err := strconv.Atoi(id); err != nil || i < 0 || i >= len(rs) || strconv.Itoa(i) != id {
			drop = append(drop, id)
		}
	}
	if len(want) == 0 && len(drop) == 0 {
		return nil
	}
	w.stale = want
	return w.reindex(ctx, c, rs, drop...)
}

// reindex re-embeds the rounds in w.stale and writes them in one batch;
// rounds with nothing to embed lose their entry, and so do the entries
// named in drop. The caller holds w.mu.
func (w *Window) reindex(ctx context.Context, c mnemo.Collection, rs []round, drop ...string) error {
	if len(drop) > 0 {
		if _, err := c.Delete(ctx, drop...); err != nil {
			return err
		}
	}
	stale := slices.Sorted(maps.Keys(w.stale))
	// In batches, each committed on its own and struck off w.stale, so a
	// long repair that a deadline or a failure cuts short keeps what it
	// did, and the next call goes on from there.
	for len(stale) > 0 {
		n := min(len(stale), reindexBatch)
		var recs []mnemo.Record
		var nothing []string
		for _, i := range stale[:n] {
			if i < 0 || i >= len(rs) {
				continue
			}
			text := w.roundText(rs[i])
			v, err := w.st.space.Vector(ctx, "round", text)
			if errors.Is(err, errNothing) {
				nothing = append(nothing, strconv.Itoa(i))
				continue
			}
			if err != nil {
				return err
			}
			recs = append(recs, roundRecord(i, v, text))
		}
		if len(recs) > 0 {
			if _, err := c.Upsert(ctx, recs...); err != nil {
				return err
			}
		}
		if len(nothing) > 0 {
			if _, err := c.Delete(ctx, nothing...); err != nil {
				return err
			}
		}
		for _, i := range stale[:n] {
			delete(w.stale, i)
		}
		stale = stale[n:]
	}
	return nil
}

// reindexBatch is how many rounds reindex writes in one batch.
const reindexBatch = 64

// roundRecord is round i's record in the recall index: its text for the
// full-text side, its number for the filter and for neighbour spreading.
func roundRecord(i int, v []float32, text string) mnemo.Record {
	return mnemo.Record{ID: strconv.Itoa(i), Vector: v, Content: text, Metadata: map[string]any{"round": i, textvec.PosField: i}}
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

// recalled picks, among the rounds keep leaves out, those most relevant
// to the newest user message, and renders them as one system message
// (ok false when none), recording its choices in rep. A round is recalled
// only when its similarity reaches w.minSim; the header counts against
// the budget like the rounds. The rounds go in ranking order while they
// fit in what the kept rounds leave of the budget; until one is recalled,
// a round that does not fit takes the room of the oldest kept rounds
// (never the newest or a protected one), so the most relevant round that
// can fit is recalled rather than the first that happens to. keep is
// updated. The caller holds w.mu.
func (w *Window) recalled(ctx context.Context, rs []round, keep []bool, rep *Report) (Message, bool, error) {
	var query string
	for i := len(w.msgs) - 1; i >= 0; i-- {
		if w.msgs[i].m.Role == User {
			query = w.msgs[i].m.Content
			break
		}
	}
	var in []any
	used := 0
	for i, r := range rs {
		if keep[i] {
			used += r.tokens
		} else {
			in = append(in, i)
		}
	}
	if query == "" || len(in) == 0 {
		return Message{}, false, nil
	}
	f, err := mnemo.NewFilter(map[string]any{"round": map[string]any{"$in": in}})
	if err != nil {
		return Message{}, false, err
	}
	// Hybrid: the query's words and embedding fused, a matching round
	// lifting the rounds beside it (see Options.Recall).
	hits, err := w.st.space.Query(ctx, w.st.rounds, textvec.Retrieval{}, query, len(in), f, nil)
	if errors.Is(err, errNothing) {
		return Message{}, false, nil
	}
	if err != nil {
		return Message{}, false, err
	}
	parts := []string{RecallHeader}
	room := w.budget - used
	cost := func(extra string) int { // the block's tokens with extra added
		return w.counter(Message{Role: System, Content: strings.Join(append(parts, extra), "\n\n")})
	}
	var picked []int
	for _, h := range hits {
		i, _ := strconv.Atoi(h.Record.ID)
		text := w.roundText(rs[i])
		item := RecallItem{Round: i, Tokens: w.counter(Message{Content: text}), Similarity: h.Similarity, Score: h.Score}
		if h.Similarity < w.minSim {
			item.Reason = ReasonBelowCutoff
			rep.Dropped = append(rep.Dropped, item)
			continue
		}
		need := cost(text)
		if need > room && len(picked) == 0 {
			room += w.makeRoom(rs, keep, need-room)
		}
		if need > room {
			item.Reason = ReasonNoRoom
			rep.Dropped = append(rep.Dropped, item)
			continue
		}
		parts = append(parts, text)
		picked = append(picked, i)
		rep.Recalled = append(rep.Recalled, item)
	}
	if len(picked) == 0 {
		return Message{}, false, nil
	}
	texts := make([]string, len(picked))
	order := slices.Clone(picked)
	slices.Sort(order) // chronological inside the block
	for j, i := range order {
		texts[j] = parts[1+slices.Index(picked, i)]
	}
	return Message{Role: System, Content: strings.Join(append([]string{RecallHeader}, texts...), "\n\n")}, true, nil
}

// makeRoom frees at least need tokens by leaving out the oldest kept
// rounds that are neither the newest nor protected, and returns the
// tokens freed; it frees nothing when that cannot reach need. keep is
// updated. The caller holds w.mu.
func (w *Window) makeRoom(rs []round, keep []bool, need int) int {
	free := 0
	for i := range len(rs) - 1 {
		if keep[i] && !rs[i].protected {
			free += rs[i].tokens
		}
	}
	if free < need {
		return 0
	}
	freed := 0
	for i := 0; i < len(rs)-1 && freed < need; i++ {
		if keep[i] && !rs[i].protected {
			keep[i] = false
			freed += rs[i].tokens
		}
	}
	return freed
}
