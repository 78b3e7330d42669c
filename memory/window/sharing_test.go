package window

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/postgres"
	"github.com/mnemodb/mnemo/postgres/pgtest"
)

// flaky is an embedder that fails while failing is set.
type flaky struct {
	embed.Embedder
	failing atomic.Bool
}

var errEmbedder = errors.New("embedder down")

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.failing.Load() {
		return nil, errEmbedder
	}
	return f.Embedder.Embed(ctx, texts)
}

func newFlaky(t *testing.T) *flaky {
	h, err := embed.NewHashing(0)
	if err != nil {
		t.Fatal(err)
	}
	return &flaky{Embedder: h}
}

// checkRecall asserts that every round of w has its recall entry, equal
// to its text, and that no entry names a round that does not exist.
func checkRecall(t *testing.T, w *Window) {
	t.Helper()
	ctx := context.Background()
	if err := w.mu.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.mu.Unlock()
	rs := w.rounds()
	c := w.st.rounds.Get()
	n, err := c.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(rs) {
		t.Errorf("%d recall entries for %d rounds", n, len(rs))
	}
	for i, r := range rs {
		rec, ok, err := c.Get(ctx, strconv.Itoa(i))
		if err != nil || !ok || rec.Content != w.roundText(r) {
			t.Errorf("round %d: entry %q (found %v, %v), want %q", i, rec.Content, ok, err, w.roundText(r))
		}
	}
}

// TestRecordWithFailingEmbedder: the embedder fails while messages are
// recorded. Record stores each message once (nil error: the message is
// stored) and the recall index catches up once the embedder is back, at
// the next Record and at the next open.
func TestRecordWithFailingEmbedder(t *testing.T) {
	ctx := context.Background()
	s := memtest.Store(t)
	emb := newFlaky(t)
	opts := &Options{Recall: true, Embedder: emb}
	w, err := NewStored(ctx, s, "flaky", 1000, opts)
	if err != nil {
		t.Fatal(err)
	}
	mustRecord(t, w, Message{Role: User, Content: "my locker code is 4711"})
	emb.failing.Store(true)
	mustRecord(t, w, Message{Role: Assistant, Content: "noted, the locker code"})
	mustRecord(t, w, Message{Role: User, Content: "what pasta shape goes with pesto?"})
	if n := w.Len(); n != 3 {
		t.Fatalf("Len = %d after three Records, want 3", n)
	}
	if _, err := w.Context(ctx); err != nil { // recall cannot embed the query either
		t.Logf("Context while the embedder fails: %v", err)
	}
	emb.failing.Store(false)
	mustRecord(t, w, Message{Role: Assistant, Content: "trofie or linguine"})
	checkRecall(t, w)

	// The same, repaired at open: the window closes while stale.
	emb.failing.Store(true)
	mustRecord(t, w, Message{Role: User, Content: "and with ragu?"})
	w.Close()
	emb.failing.Store(false)
	w, err = NewStored(ctx, s, "flaky", 1000, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n := w.Len(); n != 5 {
		t.Fatalf("Len = %d after reopen, want 5", n)
	}
	checkRecall(t, w)
}

// TestRecordThatFailsChangesNothing: a Record whose message cannot be
// stored returns the error and leaves the window as it was, so a retry
// stores the message once.
func TestRecordThatFailsChangesNothing(t *testing.T) {
	ctx := context.Background()
	down := errors.New("server down")
	var failing atomic.Bool
	s := &memtest.Faulty{Store: memtest.Store(t), Hook: func(_ context.Context, op, name string) error {
		if failing.Load() && op == "upsert" && strings.HasSuffix(name, ".messages") {
			return down
		}
		return nil
	}}
	w, err := NewStored(ctx, s, "retry", 1000, &Options{Recall: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustRecord(t, w, Message{Role: User, Content: "first"})
	failing.Store(true)
	if err := w.Record(ctx, Message{Role: Assistant, Content: "second"}); !errors.Is(err, down) {
		t.Fatalf("Record with the store down: %v, want %v", err, down)
	}
	failing.Store(false)
	mustRecord(t, w, Message{Role: Assistant, Content: "second"})
	h, err := w.History(ctx)
	if err != nil || len(h) != 2 || h[1].Content != "second" {
		t.Fatalf("History = %+v, %v; want first, second", h, err)
	}
	checkRecall(t, w)
}

// TestRecallCollectionDropped: another handle drops the recall index;
// the window re-creates and refills it instead of failing for good.
func TestRecallCollectionDropped(t *testing.T) {
	ctx := context.Background()
	s := memtest.Store(t)
	w, err := NewStored(ctx, s, "dropped", 100, &Options{Recall: true, RecallShare: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustRecord(t, w, Message{Role: User, Content: "my dog is called Rex"})
	mustRecord(t, w, Message{Role: Assistant, Content: "a fine name for a dog"})
	if err := s.DropCollection(ctx, "dropped.rounds"); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		mustRecord(t, w, Message{Role: User, Content: fmt.Sprintf("filler message number %d about the weather", i)})
		mustRecord(t, w, Message{Role: Assistant, Content: "the weather is fine today"})
	}
	mustRecord(t, w, Message{Role: User, Content: "what is my dog called?"})
	got, err := w.Context(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(got), "Rex") {
		t.Fatalf("Context after the drop recalled nothing of Rex: %v", got)
	}
	checkRecall(t, w)
}

// TestSessionTwoStores opens one session through two Stores on the same
// data (two engine handles of one database, or two PostgreSQL Stores):
// the second must be refused while the first is open.
func TestSessionTwoStores(t *testing.T) {
	ctx := context.Background()
	first, second := memtest.TwoStores(t)
	w, err := NewStored(ctx, first, "one", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewStored(ctx, second, "one", 100, nil); !errors.Is(err, ErrSessionOpen) {
		t.Fatalf("second store on an open session: %v, want ErrSessionOpen", err)
	}
	other, err := NewStored(ctx, second, "another", 100, nil)
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	other.Close()
	mustRecord(t, w, Message{Role: User, Content: "hello"})
	w.Close()
	w, err = NewStored(ctx, second, "one", 100, nil)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	defer w.Close()
	if w.Len() != 1 {
		t.Fatalf("Len = %d, want 1", w.Len())
	}
}

// TestDeadlineBehindFrozenRecord: a Record stuck in a server round trip
// holds the window; a call with its own deadline gives up at that
// deadline instead of waiting for the Record.
func TestDeadlineBehindFrozenRecord(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	var freeze atomic.Bool
	s := &memtest.Faulty{Store: memtest.Store(t), Hook: func(ctx context.Context, op, name string) error {
		if freeze.Load() && op == "upsert" {
			entered <- struct{}{}
			<-release
		}
		return nil
	}}
	w, err := NewStored(ctx, s, "frozen", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	freeze.Store(true)
	done := make(chan error)
	go func() { done <- w.Record(ctx, Message{Role: User, Content: "stuck"}) }()
	<-entered
	for _, call := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"History", func(ctx context.Context) error { _, err := w.History(ctx); return err }},
		{"Context", func(ctx context.Context) error { _, err := w.Context(ctx); return err }},
		{"Record", func(ctx context.Context) error { return w.Record(ctx, Message{Role: Assistant, Content: "x"}) }},
	} {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := call.fn(dctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s behind a frozen Record: %v, want DeadlineExceeded", call.name, err)
		}
	}
	freeze.Store(false)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if w.Len() != 1 {
		t.Fatalf("Len = %d, want 1 (the calls that gave up recorded nothing)", w.Len())
	}
}

// TestSessionTwoProcesses: a session open in another process (this test
// binary again, on the same PostgreSQL schema) cannot be opened here;
// once that process closes it, or dies, it can, and every message either
// recorded is there.
func TestSessionTwoProcesses(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	ctx := context.Background()
	s := memtest.OpenPG(t, dsn)
	for round, kill := range []bool{false, true} {
		child, stdin, lines := startWriter(t, dsn)
		if line := <-lines; line != "ready" {
			t.Fatalf("writer: %q", line)
		}
		_, err := NewStored(ctx, s, "shared", 1000, nil)
		if !errors.Is(err, ErrSessionOpen) || !strings.Contains(err.Error(), "server process") {
			t.Fatalf("session open in another process: %v, want ErrSessionOpen naming the holder", err)
		}
		if kill {
			child.Process.Kill()
		} else {
			stdin.Close()
		}
		child.Wait()
		// The server ends a dead client's session (and its lock) when it
		// sees the connection close; retry briefly for that.
		var w *Window
		for try := 0; ; try++ {
			w, err = NewStored(ctx, s, "shared", 1000, nil)
			if err == nil || !errors.Is(err, ErrSessionOpen) || try == 100 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("after the other process ended: %v", err)
		}
		for i := range 100 {
			mustRecord(t, w, Message{Role: User, Content: fmt.Sprintf("parent %d-%d", round, i)})
		}
		if want := 200 * (round + 1); w.Len() != want { // 100 a writer a round
			t.Fatalf("Len = %d, want %d", w.Len(), want)
		}
		w.Close()
	}
}

// startWriter starts this test binary as a writer: it records 100
// messages into session "shared", says "ready" and holds the session
// until its standard input closes.
func startWriter(t *testing.T, dsn string) (*exec.Cmd, io.WriteCloser, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSessionWriterProcess$")
	cmd.Env = append(os.Environ(), "MNEMO_WINDOW_WRITER_DSN="+dsn)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- ") && l != "PASS" {
				lines <- l
			}
		}
		close(lines)
	}()
	return cmd, stdin, lines
}

// TestSessionWriterProcess is the writer TestSessionTwoProcesses starts;
// run directly, it does nothing.
func TestSessionWriterProcess(t *testing.T) {
	dsn := os.Getenv("MNEMO_WINDOW_WRITER_DSN")
	if dsn == "" {
		t.Skip("the writer process of TestSessionTwoProcesses")
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := NewStored(ctx, s, "shared", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := w.Record(ctx, Message{Role: User, Content: fmt.Sprintf("child %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSessionLost: the server ends the connection holding a window's
// session lock; the window's next write fails with ErrSessionLost instead
// of overwriting what a second window, which may now take the session,
// records.
func TestSessionLost(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	ctx := context.Background()
	a, b := memtest.OpenPG(t, dsn), memtest.OpenPG(t, dsn)
	wa, err := NewStored(ctx, a, "s", 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Close()
	mustRecord(t, wa, Message{Role: User, Content: "A0"})
	// End the holder's lock connection, as an administrator or an idle
	// timeout would.
	if _, err := b.Collections(ctx); err != nil {
		t.Fatal(err)
	}
	killLockHolders(t, dsn, "window.session/s")
	if err := wa.Record(ctx, Message{Role: User, Content: "A1"}); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("Record after the lock was lost: %v, want ErrSessionLost", err)
	}
	wb, err := NewStored(ctx, b, "s", 1000, nil)
	if err != nil {
		t.Fatalf("the second window: %v", err)
	}
	defer wb.Close()
	mustRecord(t, wb, Message{Role: User, Content: "B0"})
	if err := wa.Record(ctx, Message{Role: User, Content: "A2"}); !errors.Is(err, ErrSessionLost) {
		t.Fatalf("a later Record of the first window: %v, want ErrSessionLost", err)
	}
	h, _ := wb.History(ctx)
	if contents(h) != "A0 B0" {
		t.Fatalf("stored %q, want A0 B0", contents(h))
	}
}

// killLockHolders ends the server sessions holding the advisory lock a
// Store of dsn's schema takes for name (see package postgres), and only
// those: the tests of other packages share the server and hold locks of
// their own.
func killLockHolders(t *testing.T, dsn, name string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid <> pg_backend_pid()
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND (l.classid::int8 << 32 | l.objid::int8) = hashtextextended(current_schema() || '/mnemo-lock/' || $1, 0)`,
		name).Scan(&n); err != nil || n == 0 {
		t.Fatalf("terminated %d holders of lock %q: %v", n, name, err)
	}
}

// TestUnknownOutcome: a write whose reply is lost (a deadline, a broken
// connection) after the store committed it returns an error; the window
// then reads the session again, so it shows what is stored and its next
// write does not land over it.
func TestUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	lost := errors.New("reply lost")
	var loseReply atomic.Bool
	base := memtest.Store(t)
	s := &memtest.Faulty{Store: base, Hook: func(ctx context.Context, op, name string) error {
		if loseReply.Load() && op == "upsert" && strings.HasSuffix(name, ".messages") {
			loseReply.Store(false)
			c, err := base.Collection(ctx, name)
			if err != nil {
				return err
			}
			return errors.Join(lost, commitThenFail(ctx, c))
		}
		return nil
	}}
	w, err := NewStored(ctx, s, "u", 1000, &Options{Recall: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	mustRecord(t, w, Message{Role: User, Content: "first"})
	pendingWrite = &Message{Role: Assistant, Content: "committed, reply lost"}
	loseReply.Store(true)
	if err := w.Record(ctx, *pendingWrite); !errors.Is(err, lost) {
		t.Fatalf("Record whose reply was lost: %v", err)
	}
	h, err := w.History(ctx)
	if err != nil || contents(h) != "first committed, reply lost" {
		t.Fatalf("History after the lost reply: %q, %v; want what is stored", contents(h), err)
	}
	mustRecord(t, w, Message{Role: User, Content: "next"})
	h, _ = w.History(ctx)
	if contents(h) != "first committed, reply lost next" {
		t.Fatalf("History = %q", contents(h))
	}
	checkRecall(t, w)
}

// pendingWrite is the message commitThenFail stores, as the write whose
// reply is lost would have.
var pendingWrite *Message

// commitThenFail stores pendingWrite as message 1 of the session.
func commitThenFail(ctx context.Context, c mnemo.Collection) error {
	_, err := c.Upsert(ctx, messageRecord(1, entry{m: *pendingWrite}))
	return err
}

// TestBadSessionNames: control characters are refused like other bad
// names, with ErrInvalid, on every backend.
func TestBadSessionNames(t *testing.T) {
	s := memtest.Store(t)
	for _, name := range []string{"a\x00b", "tab\there", "line\nfeed", "del\x7f"} {
		if _, err := NewStored(context.Background(), s, name, 100, nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("session %q: %v, want ErrInvalid", name, err)
		}
	}
}

// noVectors is an embedder that answers with no vectors at all.
type noVectors struct{ embed.Embedder }

func (noVectors) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }

// TestRecallFailure: an embedder that answers with nothing makes recall
// fail, not panic: Record stores the message, and Context returns the
// window without recall and an error wrapping ErrRecall.
func TestRecallFailure(t *testing.T) {
	ctx := context.Background()
	h, _ := embed.NewHashing(0)
	w, err := NewStored(ctx, memtest.Store(t), "r", 10, &Options{Recall: true, Embedder: noVectors{h}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 6 {
		mustRecord(t, w, Message{Role: User, Content: fmt.Sprintf("message number %d about things", i)})
	}
	got, err := w.Context(ctx)
	if !errors.Is(err, ErrRecall) || !errors.Is(err, embed.ErrResponse) {
		t.Fatalf("Context with a broken embedder: %v, want ErrRecall wrapping embed.ErrResponse", err)
	}
	if len(got) == 0 || got[len(got)-1].Content != "message number 5 about things" {
		t.Fatalf("Context returned %v with the error, want the window", got)
	}
}
