package window

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestReadStoredWhileOpen reads and searches a session that a window has
// open and records into: no lock is taken, every recorded message is
// seen, with its role, tool calls and index.
func TestReadStoredWhileOpen(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	w, err := NewStored(ctx, db, "chat", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	msgs := []Message{
		{Role: System, Content: "You are terse."},
		{Role: User, Content: "Which database did we pick for the billing service?"},
		{Role: Assistant, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"q":"billing"}`}}},
		{Role: Tool, ToolCallID: "c1", Content: "billing uses PostgreSQL 15"},
		{Role: Assistant, Content: "PostgreSQL, version 15."},
		{Role: User, Content: "And the cache?"},
	}
	for _, m := range msgs {
		if err := w.Record(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.CreateCollection(ctx, "other.messages", mnemo.CollectionConfig{Dimension: 1}); err != nil {
		t.Fatal(err)
	}
	sessions, err := Sessions(ctx, db)
	if err != nil || !slices.Equal(sessions, []string{"chat"}) {
		t.Fatalf("Sessions = %q, %v; want [chat] (other.messages is no session's)", sessions, err)
	}

	got, total, err := ReadStored(ctx, db, "chat", 2, 3)
	if err != nil || total != len(msgs) || len(got) != 3 {
		t.Fatalf("ReadStored(2, 3) = %d messages of %d, %v; want 3 of %d", len(got), total, err, len(msgs))
	}
	for i, m := range got {
		want := msgs[2+i]
		if m.Index != 2+i || m.Session != "chat" || m.Message.Role != want.Role || m.Message.Content != want.Content ||
			m.Message.ToolCallID != want.ToolCallID || !slices.Equal(m.Message.ToolCalls, want.ToolCalls) {
			t.Errorf("message %d: %+v, want index %d, %+v", i, m, 2+i, want)
		}
	}
	if got, _, err := ReadStored(ctx, db, "chat", 6, 10); err != nil || len(got) != 0 {
		t.Errorf("ReadStored past the end = %v, %v; want none", got, err)
	}

	found, err := SearchStored(ctx, db, "chat", "postgresql", 5)
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for _, f := range found {
		if f.Score <= 0 {
			t.Errorf("hit %d has score %v", f.Index, f.Score)
		}
		idx = append(idx, f.Index)
	}
	slices.Sort(idx)
	if !slices.Equal(idx, []int{3, 4}) {
		t.Fatalf("SearchStored(postgresql) found messages %v, want [3 4]", idx)
	}
	if found, err := SearchStored(ctx, db, "chat", "?", 5); err != nil || len(found) != 0 {
		t.Errorf("SearchStored(?) = %v, %v; want nothing", found, err)
	}
	// The window goes on recording: the next read sees it.
	if err := w.Record(ctx, Message{Role: Assistant, Content: "Redis."}); err != nil {
		t.Fatal(err)
	}
	if found, err := SearchStored(ctx, db, "chat", "redis", 5); err != nil || len(found) != 1 || found[0].Index != 6 {
		t.Errorf("SearchStored(redis) after recording = %+v, %v; want message 6", found, err)
	}
}

// TestStoredErrors: a session that is not stored is ErrNoSession, bad
// arguments ErrInvalid, whatever the collections hold.
func TestStoredErrors(t *testing.T) {
	ctx := context.Background()
	db := memtest.Store(t)
	if _, err := db.CreateCollection(ctx, "facts.messages", mnemo.CollectionConfig{Dimension: 1, Kind: "store.semantic"}); err != nil {
		t.Fatal(err)
	}
	for _, session := range []string{"none", "facts"} {
		if _, _, err := ReadStored(ctx, db, session, 0, 1); !errors.Is(err, ErrNoSession) {
			t.Errorf("ReadStored(%q): %v, want ErrNoSession", session, err)
		}
		if _, err := SearchStored(ctx, db, session, "x", 1); !errors.Is(err, ErrNoSession) {
			t.Errorf("SearchStored(%q): %v, want ErrNoSession", session, err)
		}
	}
	bad := []struct {
		name string
		err  error
	}{
		{"empty session", func() error { _, _, err := ReadStored(ctx, db, "", 0, 1); return err }()},
		{"negative from", func() error { _, _, err := ReadStored(ctx, db, "s", -1, 1); return err }()},
		{"zero n", func() error { _, _, err := ReadStored(ctx, db, "s", 0, 0); return err }()},
		{"zero k", func() error { _, err := SearchStored(ctx, db, "s", "x", 0); return err }()},
		{"invalid query", func() error { _, err := SearchStored(ctx, db, "s", "\xff", 1); return err }()},
		{"nil db", func() error { _, err := Sessions(ctx, nil); return err }()},
	}
	for _, tt := range bad {
		if !errors.Is(tt.err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tt.name, tt.err)
		}
	}
}

// TestStoredAfterUnfinishedTrim: while a SetMessages's trim marker is
// there (its deletes failed), the messages past it are not the session's,
// and neither reading nor searching returns them.
func TestStoredAfterUnfinishedTrim(t *testing.T) {
	ctx := context.Background()
	failDeletes := false
	errDown := errors.New("server down")
	db := &memtest.Faulty{Store: memtest.Store(t), Hook: func(_ context.Context, op, _ string) error {
		if op == "delete" && failDeletes {
			return errDown
		}
		return nil
	}}
	w, err := NewStored(ctx, db, "s", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	many := func(n int, word string) []Message {
		ms := make([]Message, n)
		for i := range ms {
			ms[i] = Message{Role: User, Content: fmt.Sprintf("%s message %d", word, i)}
		}
		return ms
	}
	if err := w.SetMessages(ctx, many(10, "old")); err != nil {
		t.Fatal(err)
	}
	// The upsert goes through, the delete of the surplus fails: the
	// window holds the new messages, the old surplus stays stored.
	failDeletes = true
	if err := w.SetMessages(ctx, many(3, "new")); !errors.Is(err, errDown) {
		t.Fatalf("SetMessages whose delete failed: %v", err)
	}
	got, total, err := ReadStored(ctx, db, "s", 0, 100)
	if err != nil || total != 3 || len(got) != 3 || got[2].Message.Content != "new message 2" {
		t.Fatalf("ReadStored = %+v, total %d, %v; want the 3 new messages", got, total, err)
	}
	found, err := SearchStored(ctx, db, "s", "old message", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if f.Index >= 3 {
			t.Errorf("SearchStored found message %d past the trim marker: %q", f.Index, f.Message.Content)
		}
	}
	if found, err := SearchStored(ctx, db, "s", "new", 10); err != nil || len(found) != 3 {
		t.Errorf("SearchStored(new) = %d hits, %v; want 3", len(found), err)
	}
}
