// Package chat is memory that enriches a model's context before each call,
// the Go form of autogen_core.memory: a Memory stores Content, answers
// queries, and UpdateContext appends what is relevant to a ModelContext as
// one system message.
//
//   - [ListMemory] keeps contents in order and adds all of them;
//   - [VectorMemory] keeps them in an engine collection and adds the K
//     most similar to the context's last message (the Chroma-backed memory
//     of the original), scored 1 - d/2 for cosine distance d.
//
// Defaults are the original's names: a ListMemory made with an empty name
// is DefaultListName ("default_list_memory"), and a VectorMemory's
// collection is DefaultCollection ("memory_store"; see NewVector for
// databases made with the earlier "chat_memory").
//
// # Rendering
//
// The model sees each content as one numbered line. The original writes
// Python's str(content); Go has no such conversion, so a Content renders
// as follows:
//
//	Content          original: str(content)         mnemo
//	string           the string                     the string (the same)
//	map[string]any   Python repr, {'a': 1},         canonical JSON, {"a":1}, keys
//	                 in insertion order             sorted (Go maps have no order)
//	[]byte           Python repr, b'...'            the bytes as text when they are
//	                                                UTF-8 and the MIME type is not
//	                                                image/* or octet-stream, else
//	                                                "<N bytes of MIME>"
//	other types      refused by MemoryContent       ErrInvalid
//
// VectorMemory embeds that same text (the original lower-cases a JSON
// content's text before embedding it; we do not), and refuses binary and
// image contents (ErrNotEmbeddable), as the original does.
//
// # Text
//
// ListMemory stores any content, empty text included, as the original.
// VectorMemory embeds any text with a non-space character, symbols and
// emoji alone ("?", "🙂") included, as the original; it refuses to store
// empty or whitespace-only text (ErrNotEmbeddable: nothing could find it,
// while the original stores it), and such a query, or such a last message
// in UpdateContext, finds nothing and adds nothing, with no error (the
// original adds the K contents nearest to the embedding of "").
package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// MIME types of Content. Any other string is allowed too.
const (
	TextPlain   = "text/plain"
	JSON        = "application/json"
	Markdown    = "text/markdown"
	Image       = "image/*"
	OctetStream = "application/octet-stream"
)

// Content is one memory item. Content holds a string, a []byte, or a JSON
// object (map[string]any).
type Content struct {
	Content  any
	MimeType string
	Metadata map[string]any
}

// QueryResult holds the contents a query found.
type QueryResult struct{ Results []Content }

// UpdateContextResult holds the memories UpdateContext added.
type UpdateContextResult struct{ Memories QueryResult }

// Message is a chat message of a model context.
type Message struct {
	Role    string // "system", "user", "assistant"
	Content string
}

// ModelContext is the minimal model context a Memory updates.
type ModelContext interface {
	Messages(ctx context.Context) ([]Message, error)
	AddMessage(ctx context.Context, m Message) error
}

// Memory is the contract both memories implement. Implementations are
// safe for concurrent use by multiple goroutines.
type Memory interface {
	Add(ctx context.Context, c Content) error
	// Query takes a string or a Content.
	Query(ctx context.Context, query any) (QueryResult, error)
	UpdateContext(ctx context.Context, mc ModelContext) (UpdateContextResult, error)
	Clear(ctx context.Context) error
	Close() error
}

// text renders a content as the text the model sees (and VectorMemory
// embeds): strings as they are, JSON objects as canonical JSON (sorted
// keys), bytes as UTF-8 text when they are, else a short description.
func text(c Content) (string, error) {
	switch v := c.Content.(type) {
	case string:
		return v, nil
	case map[string]any:
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("%w: JSON content: %v", ErrInvalid, err)
		}
		return string(b), nil
	case []byte:
		if utf8.Valid(v) && !strings.HasPrefix(c.MimeType, "image/") && c.MimeType != OctetStream {
			return string(v), nil
		}
		return fmt.Sprintf("<%d bytes of %s>", len(v), c.MimeType), nil
	case nil:
		return "", fmt.Errorf("%w: no content", ErrInvalid)
	}
	return "", fmt.Errorf("%w: content of type %T (want string, []byte or map[string]any)", ErrInvalid, c.Content)
}

// clone deep-copies a Content's metadata and byte slices.
func clone(c Content) Content {
	if b, ok := c.Content.([]byte); ok {
		c.Content = slices.Clone(b)
	}
	if m, ok := c.Content.(map[string]any); ok {
		c.Content = maps.Clone(m)
	}
	c.Metadata = maps.Clone(c.Metadata)
	return c
}

// numbered renders "1. a\n2. b".
func numbered(cs []Content) string {
	lines := make([]string, len(cs))
	for i, c := range cs {
		t, _ := text(c)
		lines[i] = fmt.Sprintf("%d. %s", i+1, t)
	}
	return strings.Join(lines, "\n")
}

// ListMemory keeps contents in chronological order; Query returns all of
// them and UpdateContext adds all of them. It is safe for concurrent use by
// multiple goroutines (Name is read-only after construction).
type ListMemory struct {
	Name string
	mu   sync.Mutex
	list []Content
}

// DefaultListName is the Name of a ListMemory made without one, the
// original's.
const DefaultListName = "default_list_memory"

// NewListMemory returns an empty list memory named name, or
// DefaultListName when name is empty (as the original's name=None).
func NewListMemory(name string) *ListMemory {
	if name == "" {
		name = DefaultListName
	}
	return &ListMemory{Name: name}
}

// Add appends a copy of c.
func (l *ListMemory) Add(ctx context.Context, c Content) error {
	if _, err := text(c); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, clone(c))
	return nil
}

// Query returns every content, in order (the query is ignored, as in the
// original).
func (l *ListMemory) Query(ctx context.Context, query any) (QueryResult, error) {
	return QueryResult{Results: l.Contents()}, nil
}

// Contents returns a copy of the stored contents.
func (l *ListMemory) Contents() []Content {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Content, len(l.list))
	for i, c := range l.list {
		out[i] = clone(c)
	}
	return out
}

// SetContents replaces the stored contents with copies of cs.
func (l *ListMemory) SetContents(cs []Content) error {
	for _, c := range cs {
		if _, err := text(c); err != nil {
			return err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = l.list[:0]
	for _, c := range cs {
		l.list = append(l.list, clone(c))
	}
	return nil
}

// ListHeader starts the system message ListMemory.UpdateContext adds.
const ListHeader = "\nRelevant memory content (in chronological order):\n"

// UpdateContext appends one system message listing every content,
// numbered, and returns them; with nothing stored it does nothing.
func (l *ListMemory) UpdateContext(ctx context.Context, mc ModelContext) (UpdateContextResult, error) {
	cs := l.Contents()
	if len(cs) == 0 {
		return UpdateContextResult{}, nil
	}
	if err := mc.AddMessage(ctx, Message{Role: "system", Content: ListHeader + numbered(cs) + "\n"}); err != nil {
		return UpdateContextResult{}, err
	}
	return UpdateContextResult{Memories: QueryResult{Results: cs}}, nil
}

// Clear removes every content.
func (l *ListMemory) Clear(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = nil
	return nil
}

// Close does nothing.
func (l *ListMemory) Close() error { return nil }

// BufferedContext is a ModelContext that shows the last Size messages. It
// is safe for concurrent use by multiple goroutines (Size is read-only
// after construction).
type BufferedContext struct {
	Size int
	mu   sync.Mutex
	msgs []Message
}

// Messages returns the last Size messages (all when Size <= 0).
func (b *BufferedContext) Messages(ctx context.Context) ([]Message, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	msgs := b.msgs
	if b.Size > 0 && len(msgs) > b.Size {
		msgs = msgs[len(msgs)-b.Size:]
	}
	return slices.Clone(msgs), nil
}

// AddMessage appends m.
func (b *BufferedContext) AddMessage(ctx context.Context, m Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, m)
	return nil
}
