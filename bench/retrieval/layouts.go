package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/scope"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
)

// A Layout is how a set of conversations reaches memory: which store
// each turn goes to, in what order, and whether the turns carry their
// conversation (a session) and their place in it (a position).
type Layout struct {
	Name string
	// Stores lists each store's turns in the order they are stored.
	Stores func(l *LoCoMo) [][]Turn
	// Positions: each turn is stored with its place in its conversation.
	// Without it the order of storage is the only order there is.
	Positions bool
	// Sessions: each turn is stored with its conversation as its
	// session.
	Sessions bool
	// Scopes: each conversation is a user of its own, written and asked
	// through a handle scoped to it (package scope).
	Scopes bool
}

// Layouts are the robustness layouts: one store per conversation in
// conversation order; the same with each store's turns in a random order
// (with their positions, and without); every conversation in one store,
// one after another; and every conversation in one store with their
// turns interleaved as the turns of concurrent users arrive, each
// conversation a session, or a user (a scope) of its own, or neither.
func Layouts() []Layout {
	return []Layout{
		{Name: "one store per conversation, in order", Stores: perConversation(false), Sessions: true},
		{Name: "one store per conversation, random order, positions given", Stores: perConversation(true), Sessions: true, Positions: true},
		{Name: "one store per conversation, random order, no positions", Stores: perConversation(true), Sessions: true},
		{Name: "one store, conversations one after another", Stores: oneStore(false), Sessions: true},
		{Name: "one store, conversations interleaved", Stores: oneStore(true), Sessions: true},
		{Name: "one store, conversations interleaved, a scope each", Stores: oneStore(true), Scopes: true},
		{Name: "one store, conversations interleaved, no sessions or scopes", Stores: oneStore(true)},
	}
}

// perConversation puts each conversation in a store of its own, its
// turns in order or shuffled (seeded, so every run sees one order).
func perConversation(shuffle bool) func(l *LoCoMo) [][]Turn {
	return func(l *LoCoMo) [][]Turn {
		r := rand.New(rand.NewPCG(7, 7))
		var out [][]Turn
		for _, c := range l.Convs {
			turns := append([]Turn(nil), l.Turns[c]...)
			if shuffle {
				r.Shuffle(len(turns), func(i, j int) { turns[i], turns[j] = turns[j], turns[i] })
			}
			out = append(out, turns)
		}
		return out
	}
}

// oneStore puts every conversation in one store: one after another, or
// interleaved, the next turn taken from a conversation picked at random
// in proportion to the turns it has left (each conversation's turns stay
// in their order).
func oneStore(interleave bool) func(l *LoCoMo) [][]Turn {
	return func(l *LoCoMo) [][]Turn {
		var all []Turn
		if !interleave {
			for _, c := range l.Convs {
				all = append(all, l.Turns[c]...)
			}
			return [][]Turn{all}
		}
		r := rand.New(rand.NewPCG(11, 11))
		next := make([]int, len(l.Convs))
		left := 0
		for _, c := range l.Convs {
			left += len(l.Turns[c])
		}
		for ; left > 0; left-- {
			pick := r.IntN(left)
			for i, c := range l.Convs {
				rest := len(l.Turns[c]) - next[i]
				if pick < rest {
					all = append(all, l.Turns[c][next[i]])
					next[i]++
					break
				}
				pick -= rest
			}
		}
		return [][]Turn{all}
	}
}

// A Memory is a memory adapter under test, one database that handles
// share: Add stores a turn under key through the handle of user (""
// for an unscoped handle; any other, a handle scoped to that user), with
// session and position as the layout gives them ("" and nil for none);
// Search asks through user's handle and returns the keys of the turns it
// finds, best first.
type Memory interface {
	Add(ctx context.Context, user, key, text, session string, position *int64) error
	Search(ctx context.Context, user, query string, k int) ([]string, error)
	Close() error
}

// An Adapter opens an empty Memory; spread false turns neighbour
// spreading off.
type Adapter struct {
	Name string
	Open func(ctx context.Context, spread bool) (Memory, error)
}

// Adapters are the memory adapters' default paths, each with the
// embedder Embedder returns.
func Adapters() []Adapter {
	return []Adapter{
		{"store.Semantic", func(ctx context.Context, spread bool) (Memory, error) {
			return openMemory(ctx, spread, newSemantic)
		}},
		{"toolmem texts", func(ctx context.Context, spread bool) (Memory, error) {
			return openMemory(ctx, spread, newToolmem)
		}},
		{"chat.VectorMemory", func(ctx context.Context, spread bool) (Memory, error) {
			return openMemory(ctx, spread, newChat)
		}},
	}
}

// A handle is one adapter handle: add stores a turn and returns its
// key as search will report it; search returns keys.
type handle struct {
	add    func(ctx context.Context, key, text, session string, pos *int64) error
	search func(ctx context.Context, q string, k int) ([]string, error)
	close  func() error
}

// memory is a Memory over one in-memory engine database, a handle per
// user opened by open as first needed.
type memory struct {
	db      *engine.DB
	spread  bool
	open    func(ctx context.Context, db mnemo.Store, sc scope.Scope, spread bool, e embed.Embedder) (*handle, error)
	e       embed.Embedder
	handles map[string]*handle
}

func openMemory(_ context.Context, spread bool, open func(context.Context, mnemo.Store, scope.Scope, bool, embed.Embedder) (*handle, error)) (Memory, error) {
	e, err := Embedder()
	if err != nil {
		return nil, err
	}
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		return nil, err
	}
	return &memory{db: db, spread: spread, open: open, e: e, handles: map[string]*handle{}}, nil
}

func (m *memory) handle(ctx context.Context, user string) (*handle, error) {
	if h, ok := m.handles[user]; ok {
		return h, nil
	}
	var sc scope.Scope
	if user != "" {
		sc = scope.Of("user", user)
	}
	h, err := m.open(ctx, m.db.Store(), sc, m.spread, m.e)
	if err != nil {
		return nil, err
	}
	m.handles[user] = h
	return h, nil
}

func (m *memory) Add(ctx context.Context, user, key, text, session string, pos *int64) error {
	h, err := m.handle(ctx, user)
	if err != nil {
		return err
	}
	return h.add(ctx, key, text, session, pos)
}

func (m *memory) Search(ctx context.Context, user, q string, k int) ([]string, error) {
	h, err := m.handle(ctx, user)
	if err != nil {
		return nil, err
	}
	return h.search(ctx, q, k)
}

func (m *memory) Close() error {
	var errs []error
	for _, h := range m.handles {
		errs = append(errs, h.close())
	}
	return errors.Join(append(errs, m.db.Close())...)
}

func off(spread bool) *float32 {
	if spread {
		return nil
	}
	return new(float32(0))
}

func newSemantic(ctx context.Context, db mnemo.Store, sc scope.Scope, spread bool, e embed.Embedder) (*handle, error) {
	s, err := store.NewSemantic(ctx, db, &store.SemanticOptions{Embedder: e, Spread: off(spread), Scope: sc})
	if err != nil {
		return nil, err
	}
	keys := map[string]string{} // fact ID -> key
	return &handle{
		add: func(ctx context.Context, key, text, session string, pos *int64) error {
			id, err := s.AddWith(ctx, text, &store.AddOptions{Session: session, Position: pos})
			keys[id] = key
			return err
		},
		search: func(ctx context.Context, q string, k int) ([]string, error) {
			hs, err := s.SearchHits(ctx, q, k)
			out := make([]string, len(hs))
			for i, h := range hs {
				out[i] = keys[h.ID]
			}
			return out, err
		},
		close: s.Close,
	}, nil
}

func newToolmem(ctx context.Context, db mnemo.Store, sc scope.Scope, spread bool, e embed.Embedder) (*handle, error) {
	m, err := toolmem.New(ctx, db, &toolmem.Options{Embedder: e, Spread: off(spread), Scope: sc})
	if err != nil {
		return nil, err
	}
	keys := map[string]string{} // text ID -> key
	return &handle{
		add: func(ctx context.Context, key, text, session string, pos *int64) error {
			id, err := m.SaveTextWith(ctx, toolmem.TextEntry{Text: text, Session: session, Position: pos})
			keys[id] = key
			return err
		},
		search: func(ctx context.Context, q string, k int) ([]string, error) {
			es, err := m.SearchText(ctx, q, &toolmem.Search{TopK: k})
			out := make([]string, len(es))
			for i, e := range es {
				out[i] = keys[e.ID]
			}
			return out, err
		},
		close: m.Close,
	}, nil
}

func newChat(ctx context.Context, db mnemo.Store, sc scope.Scope, spread bool, e embed.Embedder) (*handle, error) {
	v, err := chat.NewVector(ctx, db, &chat.VectorOptions{Embedder: e, K: 10, Spread: off(spread), Scope: sc})
	if err != nil {
		return nil, err
	}
	return &handle{
		add: func(ctx context.Context, key, text, session string, pos *int64) error {
			c := chat.Content{Content: text, MimeType: chat.TextPlain, Metadata: map[string]any{"key": key}}
			_, err := v.AddWith(ctx, c, &chat.AddOptions{Session: session, Position: pos})
			return err
		},
		search: func(ctx context.Context, q string, k int) ([]string, error) {
			res, err := v.Query(ctx, q)
			if err != nil {
				return nil, err
			}
			var out []string
			for _, c := range res.Results[:min(k, len(res.Results))] {
				key, _ := c.Metadata["key"].(string)
				out = append(out, key)
			}
			return out, nil
		},
		close: v.Close,
	}, nil
}

// EvaluateLayout stores l's conversations as layout says in memories a
// opens (spreading on or off) and asks every question of each
// conversation of the store that holds it, for the top 10 turns. A turn
// of another conversation counts as a miss.
func EvaluateLayout(ctx context.Context, l *LoCoMo, layout Layout, a Adapter, spread bool) (LoCoMoReport, error) {
	var sum tally
	for _, turns := range layout.Stores(l) {
		m, err := a.Open(ctx, spread)
		if err != nil {
			return LoCoMoReport{}, err
		}
		convs := map[string]bool{}
		for _, t := range turns {
			session := ""
			if layout.Sessions {
				session = t.Conv
			}
			var pos *int64
			if layout.Positions {
				pos = new(int64(t.Position))
			}
			user := ""
			if layout.Scopes {
				user = t.Conv
			}
			if err := m.Add(ctx, user, t.Conv+"/"+t.DiaID, SpeakerText(t), session, pos); err != nil {
				m.Close()
				return LoCoMoReport{}, err
			}
			convs[t.Conv] = true
		}
		for _, q := range l.Questions {
			if !convs[q.Conv] {
				continue
			}
			user := ""
			if layout.Scopes {
				user = q.Conv
			}
			ranked, err := m.Search(ctx, user, q.Text, 10)
			if err != nil {
				m.Close()
				return LoCoMoReport{}, fmt.Errorf("%s: %q: %w", q.Conv, q.Text, err)
			}
			evidence := make([]string, len(q.Evidence))
			for i, e := range q.Evidence {
				evidence[i] = q.Conv + "/" + e
			}
			sum.add(q.Category, ranked, evidence)
		}
		if err := m.Close(); err != nil {
			return LoCoMoReport{}, err
		}
	}
	return sum.report(), nil
}

// EmbedderEnv names the environment variable that chooses the embedder
// the adapters run with in this package's benchmarks, so that users can
// measure their own on these sets: empty or "hashing" for the offline
// one; "openai:MODEL:DIM" for an OpenAI-compatible server (its URL in
// OPENAI_BASE_URL, its key in OPENAI_API_KEY); "ollama:MODEL:DIM" for
// Ollama (OLLAMA_HOST, default http://localhost:11434).
const EmbedderEnv = "MNEMO_BENCH_EMBEDDER"

// Embedder returns the embedder EmbedderEnv names; nil for the default
// offline one.
func Embedder() (embed.Embedder, error) {
	spec := os.Getenv(EmbedderEnv)
	if spec == "" || spec == "hashing" {
		return nil, nil
	}
	parts := strings.Split(spec, ":")
	if len(parts) != 3 || (parts[0] != "openai" && parts[0] != "ollama") {
		return nil, fmt.Errorf("%s=%q: want hashing, openai:MODEL:DIM or ollama:MODEL:DIM", EmbedderEnv, spec)
	}
	dim, err := strconv.Atoi(parts[2])
	if err != nil || dim <= 0 {
		return nil, fmt.Errorf("%s=%q: the dimension %q is not a positive integer", EmbedderEnv, spec, parts[2])
	}
	o := embed.HTTPOptions{Model: parts[1], Dimension: dim}
	if parts[0] == "ollama" {
		if h := os.Getenv("OLLAMA_HOST"); h != "" {
			if !strings.Contains(h, "://") {
				h = "http://" + h
			}
			o.BaseURL = h
		}
		return embed.NewOllama(o)
	}
	o.BaseURL = os.Getenv("OPENAI_BASE_URL")
	return embed.NewOpenAI(embed.OpenAIOptions{HTTPOptions: o, AllowNoKey: o.BaseURL != ""})
}
