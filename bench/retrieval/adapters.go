package retrieval

import (
	"context"
	"strings"

	"github.com/mnemodb/mnemo/memory/chat"
	"github.com/mnemodb/mnemo/memory/store"
	"github.com/mnemodb/mnemo/memory/toolmem"
)

// The memory adapters' default paths: each turn stored as "Speaker: text"
// in order, each question asked with the adapter's defaults except the
// number of results (10). Each index is in memory.

// ToolmemTexts stores turns with toolmem's SaveText and asks SearchText.
func ToolmemTexts(ctx context.Context, turns []Turn) (Index, error) {
	m, err := toolmem.Open("", nil)
	if err != nil {
		return nil, err
	}
	ix := &adapterIndex{close: m.Close, ids: map[string]string{}}
	for _, t := range turns {
		id, err := m.SaveText(ctx, SpeakerText(t))
		if err != nil {
			m.Close()
			return nil, err
		}
		ix.ids[id] = t.DiaID
	}
	ix.search = func(ctx context.Context, q string, k int) ([]string, error) {
		es, err := m.SearchText(ctx, q, &toolmem.Search{TopK: k})
		var out []string
		for _, e := range es {
			out = append(out, ix.ids[e.ID])
		}
		return out, err
	}
	return ix, nil
}

// SemanticFacts stores turns with store.Semantic's AddWith, each with its
// conversation as its session, and asks SearchHits.
func SemanticFacts(ctx context.Context, turns []Turn) (Index, error) {
	s, err := store.OpenSemantic("", nil)
	if err != nil {
		return nil, err
	}
	ix := &adapterIndex{close: s.Close, ids: map[string]string{}}
	for _, t := range turns {
		id, err := s.AddWith(ctx, SpeakerText(t), &store.AddOptions{Session: t.Conv})
		if err != nil {
			s.Close()
			return nil, err
		}
		ix.ids[id] = t.DiaID
	}
	ix.search = func(ctx context.Context, q string, k int) ([]string, error) {
		hs, err := s.SearchHits(ctx, q, k)
		var out []string
		for _, h := range hs {
			out = append(out, ix.ids[h.ID])
		}
		return out, err
	}
	return ix, nil
}

// ChatVector stores turns with chat.VectorMemory's Add (the dia_id in the
// content's metadata) and asks Query with K 10.
func ChatVector(ctx context.Context, turns []Turn) (Index, error) {
	v, err := chat.OpenVector("", &chat.VectorOptions{K: 10})
	if err != nil {
		return nil, err
	}
	ix := &adapterIndex{close: v.Close}
	for _, t := range turns {
		if err := v.Add(ctx, chat.Content{Content: SpeakerText(t), MimeType: chat.TextPlain, Metadata: map[string]any{"dia_id": t.DiaID}}); err != nil {
			v.Close()
			return nil, err
		}
	}
	ix.search = func(ctx context.Context, q string, k int) ([]string, error) {
		res, err := v.Query(ctx, q)
		var out []string
		for _, c := range res.Results[:min(k, len(res.Results))] {
			id, _ := c.Metadata["dia_id"].(string)
			out = append(out, id)
		}
		return out, err
	}
	return ix, nil
}

type adapterIndex struct {
	ids    map[string]string
	search func(context.Context, string, int) ([]string, error)
	close  func() error
}

func (ix *adapterIndex) Search(ctx context.Context, q string, k int) ([]string, error) {
	return ix.search(ctx, q, k)
}

func (ix *adapterIndex) Close() error { return ix.close() }

// SemanticDocs stores Cranfield documents with store.Semantic's Add and
// asks SearchHits, with the store's defaults.
func SemanticDocs(ctx context.Context, ids, docs []string) (Index, error) {
	return semanticDocs(ctx, ids, docs, nil)
}

// SemanticDocsNoSpread is SemanticDocs with score spreading off. Facts
// stored without a session do not spread anyway; the row shows that the
// default is the same.
func SemanticDocsNoSpread(ctx context.Context, ids, docs []string) (Index, error) {
	return semanticDocs(ctx, ids, docs, &store.SemanticOptions{Spread: new(float32(0))})
}

func semanticDocs(ctx context.Context, ids, docs []string, opts *store.SemanticOptions) (Index, error) {
	s, err := store.OpenSemantic("", opts)
	if err != nil {
		return nil, err
	}
	ix := &adapterIndex{close: s.Close, ids: map[string]string{}}
	for i, d := range docs {
		if strings.TrimSpace(d) == "" {
			continue // the store refuses empty facts; nothing finds them
		}
		id, err := s.Add(ctx, d, nil)
		if err != nil {
			s.Close()
			return nil, err
		}
		ix.ids[id] = ids[i]
	}
	ix.search = func(ctx context.Context, q string, k int) ([]string, error) {
		hs, err := s.SearchHits(ctx, q, k)
		var out []string
		for _, h := range hs {
			out = append(out, ix.ids[h.ID])
		}
		return out, err
	}
	return ix, nil
}
