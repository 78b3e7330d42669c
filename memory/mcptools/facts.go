package mcptools

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fact tools: store.Semantic as remember, recall, forget and list.

type factsRememberIn struct {
	Fact string `json:"fact" jsonschema:"one self-contained statement in natural language, such as 'Paul works at Google' or 'The user prefers metric units'"`
}

type factsRememberOut struct {
	ID   string `json:"id" jsonschema:"the new fact's ID"`
	Fact string `json:"fact" jsonschema:"the fact as stored"`
}

type factsRecallIn struct {
	Query string `json:"query" jsonschema:"what to look for, in words: a question or a few keywords ('where does Paul work')"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many facts at most; default 10"`
}

type factHit struct {
	ID       string  `json:"id"`
	Fact     string  `json:"fact"`
	Distance float32 `json:"distance" jsonschema:"cosine distance to the query, 0 (same meaning) to 2; smaller is closer"`
}

type factsRecallOut struct {
	Facts []factHit `json:"facts" jsonschema:"the facts found, best match first"`
}

type factsForgetIn struct {
	Fact string `json:"fact" jsonschema:"the exact text of the fact to forget, as facts_recall or facts_list returned it"`
}

type factsForgetOut struct {
	Forgotten int `json:"forgotten" jsonschema:"how many stored facts had that exact text and were deleted"`
}

type factsListIn struct {
	Offset int `json:"offset,omitempty" jsonschema:"how many facts to skip, oldest first; default 0"`
	Limit  int `json:"limit,omitempty" jsonschema:"how many facts at most; default 100"`
}

type factsListOut struct {
	Facts []string `json:"facts" jsonschema:"the facts, oldest first"`
	Total int      `json:"total" jsonschema:"how many facts are stored in all"`
}

func (t *Tools) registerFacts(s *mcp.Server) {
	add(t, s, &mcp.Tool{
		Name: "facts_remember",
		Description: fmt.Sprintf("Remember a fact for later conversations: a short, self-contained statement (who, what, a preference, a decision). "+
			"Facts are found by meaning and by words with %sfacts_recall. Storing the same text twice keeps two copies. At most %d bytes.", t.prefix, t.maxText),
		Annotations: annotate(additive, "Remember a fact"),
	}, t.factsRemember)
	add(t, s, &mcp.Tool{
		Name: "facts_recall",
		Description: fmt.Sprintf("Find the remembered facts most relevant to a query, by meaning and by words, best first. "+
			"Use it before answering anything the user may have told you before. Returns at most %d facts.", MaxResults),
		Annotations: annotate(readOnly, "Recall facts"),
	}, t.factsRecall)
	add(t, s, &mcp.Tool{
		Name: "facts_forget",
		Description: fmt.Sprintf("Forget a fact that is wrong or outdated: deletes every stored fact with exactly this text "+
			"(find the text with %sfacts_recall or %sfacts_list). Forgetting a fact that is not stored changes nothing and reports 0.", t.prefix, t.prefix),
		Annotations: annotate(destructive, "Forget a fact"),
	}, t.factsForget)
	add(t, s, &mcp.Tool{
		Name:        "facts_list",
		Description: fmt.Sprintf("List the remembered facts, oldest first, a page at a time (at most %d per call), with the total.", MaxListed),
		Annotations: annotate(readOnly, "List facts"),
	}, t.factsList)
}

func (t *Tools) factsRemember(ctx context.Context, in factsRememberIn) (factsRememberOut, error) {
	if err := t.checkText("fact", in.Fact); err != nil {
		return factsRememberOut{}, err
	}
	id, err := t.facts.Add(ctx, in.Fact, nil)
	return factsRememberOut{ID: id, Fact: in.Fact}, err
}

func (t *Tools) factsRecall(ctx context.Context, in factsRecallIn) (factsRecallOut, error) {
	if err := t.checkText("query", in.Query); err != nil {
		return factsRecallOut{}, err
	}
	n, err := results("limit", in.Limit, 10, MaxResults)
	if err != nil {
		return factsRecallOut{}, err
	}
	hits, err := t.facts.SearchHits(ctx, in.Query, n)
	if err != nil {
		return factsRecallOut{}, err
	}
	out := factsRecallOut{Facts: make([]factHit, len(hits))}
	for i, h := range hits {
		out.Facts[i] = factHit{ID: h.ID, Fact: h.Text, Distance: h.Distance}
	}
	return out, nil
}

func (t *Tools) factsForget(ctx context.Context, in factsForgetIn) (factsForgetOut, error) {
	if err := t.checkText("fact", in.Fact); err != nil {
		return factsForgetOut{}, err
	}
	all, err := t.facts.ListAll(ctx)
	if err != nil {
		return factsForgetOut{}, err
	}
	n := 0
	for _, f := range all {
		if f == in.Fact {
			n++
		}
	}
	if n == 0 {
		return factsForgetOut{}, nil
	}
	return factsForgetOut{Forgotten: n}, t.facts.Delete(ctx, in.Fact)
}

func (t *Tools) factsList(ctx context.Context, in factsListIn) (factsListOut, error) {
	n, err := results("limit", in.Limit, 100, MaxListed)
	if err != nil {
		return factsListOut{}, err
	}
	if in.Offset < 0 {
		return factsListOut{}, fmt.Errorf("%w: offset %d", ErrInvalid, in.Offset)
	}
	all, err := t.facts.ListAll(ctx)
	if err != nil {
		return factsListOut{}, err
	}
	page := all[min(in.Offset, len(all)):]
	page = page[:min(n, len(page))]
	if page == nil {
		page = []string{}
	}
	return factsListOut{Facts: page, Total: len(all)}, nil
}
