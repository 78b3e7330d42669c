package retrieval

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// EngineMethod configures retrieval straight through the engine: one
// in-memory collection per conversation.
type EngineMethod struct {
	Mode     mnemo.Mode
	Embedder embed.Embedder // for the vector and hybrid modes
	// Content makes a turn's stored text; nil means "Speaker: text".
	Content func(Turn) string
	// Fields are metadata fields indexed with the content (the turn's
	// metadata is speaker, session, date and position).
	Fields []string
	BM25   *mnemo.BM25
	Fusion mnemo.Fusion
	Index  mnemo.IndexKind
	// Spread spreads scores to adjacent turns (fields "session" and
	// "position" of the turn's metadata, or with Place mnemo.GroupField
	// and mnemo.PositionField).
	Spread *mnemo.Spread
	// Place, when set, gives each turn the group and position it is
	// stored with under mnemo.GroupField and mnemo.PositionField, as the
	// memory adapters and the command line store a conversation (see
	// ConversationPlace).
	Place func(Turn) (group string, position int)
}

// ConversationPlace places a turn in its conversation: the conversation's
// id and the turn's index in it.
func ConversationPlace(t Turn) (group string, position int) { return t.Conv, t.Position }

// SpeakerText is the stored text the LoCoMo task defines: "Speaker: text".
func SpeakerText(t Turn) string { return t.Speaker + ": " + t.Text }

// DatedText prefixes the session's date: "[8 May, 2023] Speaker: text".
func DatedText(t Turn) string { return "[" + t.DateTime + "] " + t.Speaker + ": " + t.Text }

type engineIndex struct {
	db  *engine.DB
	c   *engine.Collection
	m   EngineMethod
	ids map[string]string // record id -> document id
}

func (m EngineMethod) open(ctx context.Context) (*engine.DB, *engine.Collection, error) {
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		return nil, nil, err
	}
	dim := 1
	cfg := mnemo.CollectionConfig{Dimension: 1, Index: m.Index, Text: mnemo.TextConfig{Fields: m.Fields, BM25: m.BM25}}
	if m.Embedder != nil {
		dim = m.Embedder.Dimension()
		cfg.Embedder = m.Embedder.Identity()
	}
	cfg.Dimension = dim
	c, err := db.CreateCollection(ctx, "docs", cfg)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, c, nil
}

func (m EngineMethod) vectors(ctx context.Context, texts []string) ([][]float32, error) {
	if m.Embedder == nil {
		vs := make([][]float32, len(texts))
		for i := range vs {
			vs[i] = []float32{1}
		}
		return vs, nil
	}
	return m.Embedder.Embed(ctx, texts)
}

// LoCoMo builds an index over one conversation's turns.
func (m EngineMethod) LoCoMo(ctx context.Context, turns []Turn) (Index, error) {
	db, c, err := m.open(ctx)
	if err != nil {
		return nil, err
	}
	content := m.Content
	if content == nil {
		content = SpeakerText
	}
	texts := make([]string, len(turns))
	for i, t := range turns {
		texts[i] = content(t)
	}
	vecs, err := m.vectors(ctx, texts)
	if err != nil {
		db.Close()
		return nil, err
	}
	recs := make([]mnemo.Record, len(turns))
	ix := &engineIndex{db: db, c: c, m: m, ids: map[string]string{}}
	for i, t := range turns {
		recs[i] = mnemo.Record{ID: t.DiaID, Vector: vecs[i], Content: texts[i], Metadata: map[string]any{
			"speaker": t.Speaker, "session": t.Conv + "/" + strconv.Itoa(t.Session), "date": t.DateTime, "position": t.Position,
		}}
		if m.Place != nil {
			g, p := m.Place(t)
			recs[i].Metadata[mnemo.GroupField], recs[i].Metadata[mnemo.PositionField] = g, p
		}
		ix.ids[t.DiaID] = t.DiaID
	}
	if _, err := c.Upsert(ctx, recs...); err != nil {
		db.Close()
		return nil, err
	}
	return ix, nil
}

// Cranfield builds an index over a document collection.
func (m EngineMethod) Cranfield(ctx context.Context, ids, docs []string) (Index, error) {
	db, c, err := m.open(ctx)
	if err != nil {
		return nil, err
	}
	ix := &engineIndex{db: db, c: c, m: m, ids: map[string]string{}}
	for start := 0; start < len(docs); start += 256 {
		end := min(start+256, len(docs))
		vecs, err := m.vectors(ctx, docs[start:end])
		if err != nil {
			db.Close()
			return nil, err
		}
		recs := make([]mnemo.Record, 0, end-start)
		for i := range end - start {
			if embed.IsZero(vecs[i]) {
				continue // an empty document (Cranfield has a few): nothing finds it
			}
			r := mnemo.Record{ID: "d" + strconv.Itoa(start+i), Vector: vecs[i], Content: docs[start+i]}
			ix.ids[r.ID] = ids[start+i]
			recs = append(recs, r)
		}
		if _, err := c.Upsert(ctx, recs...); err != nil {
			db.Close()
			return nil, err
		}
	}
	return ix, nil
}

func (ix *engineIndex) Search(ctx context.Context, query string, k int) ([]string, error) {
	q := mnemo.Query{Text: query, K: k, Mode: ix.m.Mode, Fusion: ix.m.Fusion, Spread: ix.m.Spread}
	if ix.m.Mode != mnemo.ModeText {
		v, err := ix.m.vectors(ctx, []string{query})
		if err != nil {
			return nil, err
		}
		if embed.IsZero(v[0]) {
			return nil, nil
		}
		q.Vector = v[0]
	}
	hits, err := ix.c.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = ix.ids[h.Record.ID]
	}
	return out, nil
}

func (ix *engineIndex) Close() error { return ix.db.Close() }
