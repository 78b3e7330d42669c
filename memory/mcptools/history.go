package mcptools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mnemodb/mnemo/memory/window"
)

// The history tools: the conversations stored windows record
// (window.NewStored), read with window.Sessions, SearchStored and
// ReadStored, which take no session lock, so an agent recording a
// session and these tools reading it run at once.

type historySessionsIn struct{}

type historySessionsOut struct {
	Sessions []string `json:"sessions" jsonschema:"the stored conversations' session names, sorted"`
	Default  string   `json:"default,omitempty" jsonschema:"the session the other history tools read when a call names none"`
}

type historySearchIn struct {
	Query   string `json:"query" jsonschema:"words to look for in the messages"`
	Session string `json:"session,omitempty" jsonschema:"the session to search; default: the server's default session, or every session when it has none"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many messages at most; default 10"`
}

type historyMessage struct {
	Session    string     `json:"session"`
	Index      int        `json:"index" jsonschema:"the message's position in its session, from 0"`
	Role       string     `json:"role" jsonschema:"system, user, assistant or tool"`
	Content    string     `json:"content"`
	Truncated  bool       `json:"truncated,omitempty" jsonschema:"the content is cut short; history_read shows more of it"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty" jsonschema:"the tools an assistant message called"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Score      float64    `json:"score,omitempty" jsonschema:"how well the message matches the query (BM25); larger is better"`
}

// toolCall is a tool call of an assistant message.
type toolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments" jsonschema:"the call's arguments, as JSON text"`
}

type historySearchOut struct {
	Messages []historyMessage `json:"messages" jsonschema:"the messages found, best match first"`
}

type historyReadIn struct {
	Session string `json:"session,omitempty" jsonschema:"the session to read; default: the server's default session"`
	From    int    `json:"from,omitempty" jsonschema:"the first message's index, from 0; default 0"`
	Count   int    `json:"count,omitempty" jsonschema:"how many messages at most; default 20"`
}

type historyReadOut struct {
	Messages []historyMessage `json:"messages" jsonschema:"the messages, in order"`
	Total    int              `json:"total" jsonschema:"how many messages the session holds"`
}

func (t *Tools) registerHistory(s *mcp.Server) {
	add(t, s, &mcp.Tool{
		Name:        "history_sessions",
		Description: "List the stored conversations (sessions) whose messages the history tools can search and read.",
		Annotations: annotate(readOnly, "List conversations"),
	}, t.historySessions)
	add(t, s, &mcp.Tool{
		Name: "history_search",
		Description: fmt.Sprintf("Search earlier conversation messages for words (ranked by BM25: words, not meaning), best first, "+
			"in one session or in all. Each hit has its session and index: %shistory_read from a little before the index shows the exchange around it. "+
			"Returns at most %d messages, each cut to %d KiB.", t.prefix, MaxResults, maxPreview>>10),
		Annotations: annotate(readOnly, "Search conversations"),
	}, t.historySearch)
	add(t, s, &mcp.Tool{
		Name: "history_read",
		Description: fmt.Sprintf("Read the messages of a stored conversation in order, from message index from on "+
			"(at most %d per call, each cut to %d KiB), with the session's number of messages.", MaxHistoryRead, MaxMessageBytes>>10),
		Annotations: annotate(readOnly, "Read a conversation"),
	}, t.historyRead)
}

func (t *Tools) historySessions(ctx context.Context, _ historySessionsIn) (historySessionsOut, error) {
	sessions, err := window.Sessions(ctx, t.db)
	if sessions == nil {
		sessions = []string{}
	}
	return historySessionsOut{Sessions: sessions, Default: t.session}, err
}

// message is a stored message as the history tools return it, its
// content cut to at most limit bytes.
func message(m window.StoredMessage, limit int) historyMessage {
	content, cut := m.Message.Content, false
	if len(content) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(content[n]) {
			n--
		}
		content, cut = content[:n], true
	}
	var calls []toolCall
	for _, c := range m.Message.ToolCalls {
		calls = append(calls, toolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	return historyMessage{Session: m.Session, Index: m.Index, Role: string(m.Message.Role), Content: content, Truncated: cut,
		ToolCalls: calls, ToolCallID: m.Message.ToolCallID, Score: m.Score}
}

func (t *Tools) historySearch(ctx context.Context, in historySearchIn) (historySearchOut, error) {
	if err := t.checkText("query", in.Query); err != nil {
		return historySearchOut{}, err
	}
	k, err := results("limit", in.Limit, 10, MaxResults)
	if err != nil {
		return historySearchOut{}, err
	}
	sessions, all := []string{in.Session}, false
	switch {
	case in.Session != "":
	case t.session != "":
		sessions = []string{t.session}
	default:
		if sessions, err = window.Sessions(ctx, t.db); err != nil {
			return historySearchOut{}, err
		}
		all = true
	}
	var found []window.StoredMessage
	for _, s := range sessions {
		hits, err := window.SearchStored(ctx, t.db, s, in.Query, k)
		if all && errors.Is(err, window.ErrNoSession) {
			continue // dropped since it was listed
		}
		if err != nil {
			return historySearchOut{}, err
		}
		found = append(found, hits...)
	}
	// Each session ranks its own hits; across sessions, by score.
	slices.SortStableFunc(found, func(a, b window.StoredMessage) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	out := historySearchOut{Messages: []historyMessage{}}
	for _, m := range found[:min(k, len(found))] {
		out.Messages = append(out.Messages, message(m, maxPreview))
	}
	return out, nil
}

func (t *Tools) historyRead(ctx context.Context, in historyReadIn) (historyReadOut, error) {
	session := in.Session
	if session == "" {
		session = t.session
	}
	if session == "" {
		return historyReadOut{}, fmt.Errorf("%w: name a session (%shistory_sessions lists them)", ErrInvalid, t.prefix)
	}
	n, err := results("count", in.Count, 20, MaxHistoryRead)
	if err != nil {
		return historyReadOut{}, err
	}
	if in.From < 0 {
		return historyReadOut{}, fmt.Errorf("%w: from %d, want 0 or more", ErrInvalid, in.From)
	}
	msgs, total, err := window.ReadStored(ctx, t.db, session, in.From, n)
	if err != nil {
		return historyReadOut{}, err
	}
	out := historyReadOut{Messages: make([]historyMessage, len(msgs)), Total: total}
	for i, m := range msgs {
		out.Messages[i] = message(m, MaxMessageBytes)
	}
	return out, nil
}
