package window

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mnemodb/mnemo"
)

// Reading stored sessions.
//
// Sessions, ReadStored and SearchStored read the sessions stored windows
// keep (NewStored) without opening them: they take no session lock, so
// they run while a window, in this process or another, has the session
// open and records into it. They see each message as it was last stored;
// a read that runs while a SetMessages replaces the session may see the
// messages of before or of after it.

// StoredMessage is a message of a stored session, as ReadStored and
// SearchStored return it. It is a plain value; the caller owns it.
type StoredMessage struct {
	Session string
	// Index is the message's position in the session, from 0 (the first
	// message recorded).
	Index   int
	Message Message
	// Score is SearchStored's BM25 score of the message's content
	// (larger matches better); 0 from ReadStored.
	Score float64
}

// messagesSuffix ends the name of a session's messages collection.
const messagesSuffix = ".messages"

// checkSession reports whether session can name a stored session.
func checkSession(session string) error {
	if session == "" || !utf8.ValidString(session) || len(session) > maxSession || strings.ContainsFunc(session, unicode.IsControl) {
		return fmt.Errorf("%w: session name %q: want 1 to %d bytes of UTF-8 without control characters", ErrInvalid, session, maxSession)
	}
	return nil
}

// Sessions returns the names of the sessions stored in db, sorted: one
// for each collection a stored window made for its messages. It opens no
// session. db is any backend.
func Sessions(ctx context.Context, db mnemo.Store) ([]string, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	names, err := db.Collections(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		session, ok := strings.CutSuffix(name, messagesSuffix)
		if !ok || checkSession(session) != nil {
			continue
		}
		c, err := db.Collection(ctx, name)
		if errors.Is(err, mnemo.ErrCollectionNotFound) {
			continue // dropped since it was listed
		}
		if err != nil {
			return nil, err
		}
		if c.Config().Kind == KindMessages {
			out = append(out, session)
		}
	}
	slices.Sort(out)
	return out, nil
}

// storedSession is a stored session opened for reading.
type storedSession struct {
	name  string
	c     mnemo.Collection
	limit int // the messages a trim marker counts, or -1 without one
}

// openStored opens the messages of a stored session for reading:
// ErrNoSession when db holds none of that name.
func openStored(ctx context.Context, db mnemo.Store, session string) (*storedSession, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: nil database", ErrInvalid)
	}
	if err := checkSession(session); err != nil {
		return nil, err
	}
	c, err := db.Collection(ctx, session+messagesSuffix)
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrNoSession, session)
	}
	if err != nil {
		return nil, err
	}
	if k := c.Config().Kind; k != KindMessages && k != "" {
		return nil, fmt.Errorf("%w: %q (its collection is a %s collection)", ErrNoSession, session, k)
	}
	s := &storedSession{name: session, c: c, limit: -1}
	marker, ok, err := c.Get(ctx, trimID)
	if err != nil {
		return nil, err
	}
	if ok {
		n, _ := marker.Metadata["length"].(float64)
		s.limit = int(n)
	}
	return s, nil
}

// message decodes a stored message record; ok is false for a record that
// is no message of the session (the trim marker, or a message past it).
func (s *storedSession) message(r mnemo.Record) (StoredMessage, bool, error) {
	i, err := strconv.Atoi(r.ID)
	if err != nil || i < 0 || messageID(i) != r.ID || s.limit >= 0 && i >= s.limit {
		return StoredMessage{}, false, nil
	}
	m, err := decodeMessage(r)
	if err != nil {
		return StoredMessage{}, false, err
	}
	return StoredMessage{Session: s.name, Index: i, Message: m}, true, nil
}

// ReadStored returns up to n messages of the stored session, from message
// number from (0 is the first) on, in order, and how many messages the
// session holds. A session db does not hold is ErrNoSession; a negative
// from or an n below 1 is ErrInvalid. It reads O(n) records.
func ReadStored(ctx context.Context, db mnemo.Store, session string, from, n int) ([]StoredMessage, int, error) {
	if from < 0 || n < 1 {
		return nil, 0, fmt.Errorf("%w: read %d messages from message %d", ErrInvalid, n, from)
	}
	s, err := openStored(ctx, db, session)
	if err != nil {
		return nil, 0, err
	}
	total, err := s.c.Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	if s.limit >= 0 {
		total = min(total-1, s.limit) // less the marker
	}
	after := ""
	if from > 0 {
		after = messageID(from - 1)
	}
	page, _, err := s.c.Scan(ctx, after, n)
	if err != nil {
		return nil, 0, err
	}
	var out []StoredMessage
	for _, r := range page {
		m, ok, err := s.message(r)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			out = append(out, m)
		}
	}
	return out, total, nil
}

// SearchStored returns up to k messages of the stored session whose
// content best matches query by its words, best first: BM25 over the
// full-text index the session's messages collection keeps, so words,
// not meaning (no embedding; a stored window's Recall finds rounds by
// meaning). A query with no words ("?", "") finds nothing, with no error.
// A session db does not hold is ErrNoSession; k below 1 is ErrInvalid.
func SearchStored(ctx context.Context, db mnemo.Store, session, query string, k int) ([]StoredMessage, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: k %d, want at least 1", ErrInvalid, k)
	}
	if !utf8.ValidString(query) {
		return nil, fmt.Errorf("%w: the query is not valid UTF-8", ErrInvalid)
	}
	s, err := openStored(ctx, db, session)
	if err != nil {
		return nil, err
	}
	want := k
	if s.limit >= 0 {
		// Messages past the marker are not the session's: ask for as many
		// more as there may be.
		total, err := s.c.Count(ctx)
		if err != nil {
			return nil, err
		}
		want += max(0, total-1-s.limit)
	}
	hits, err := s.c.Query(ctx, mnemo.Query{Text: query, Mode: mnemo.ModeText, K: want})
	if err != nil {
		return nil, err
	}
	var out []StoredMessage
	for _, h := range hits {
		m, ok, err := s.message(h.Record)
		if err != nil {
			return nil, err
		}
		if ok && len(out) < k {
			m.Score = h.Score
			out = append(out, m)
		}
	}
	return out, nil
}
