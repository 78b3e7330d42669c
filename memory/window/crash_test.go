package window

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// The recall crash test runs a writer in a child process (this test
// binary, re-executed by TestMain when crashChildEnv is set) that records
// a scripted conversation into a stored window with recall, printing
// "ack N" after Record of message N returns. The parent kills it with
// SIGKILL at random moments, reopens the session and checks that every
// acknowledged message is in History, in order, and that the recall index
// holds exactly one entry per round, equal to the round's text: a kill
// between storing a message and re-indexing its round must be repaired by
// the reopen. MNEMO_CRASH_KILLS changes the number of kills (default 12;
// more while none has landed between the two writes).

const (
	crashChildEnv = "MNEMO_WINDOW_CRASH_CHILD" // the session's directory
	crashSeedEnv  = "MNEMO_WINDOW_CRASH_SEED"  // the script's seed
	crashSession  = "s"
	crashBudget   = 300
)

// crashScript is the conversation the child records, derived from a seed
// alone so that both processes know message n: a protected system prompt,
// then rounds of a user message, sometimes an assistant message with tool
// calls and their results, and an assistant reply. Text is random words,
// some messages long, some empty. Not safe for concurrent use.
type crashScript struct {
	seed uint64
	msgs []Message
}

// message returns message n of the script; the caller must not modify it.
func (s *crashScript) message(n int) Message {
	if len(s.msgs) == 0 {
		s.msgs = append(s.msgs, Message{Role: System, Content: "You are a careful assistant. " + crashText(rand.New(rand.NewPCG(s.seed, 0)), 20), Protected: true})
	}
	for len(s.msgs) <= n {
		s.addRound(len(s.msgs))
	}
	return s.msgs[n]
}

// addRound appends a round whose user message is message n.
func (s *crashScript) addRound(n int) {
	r := rand.New(rand.NewPCG(s.seed, uint64(n)))
	text := func() string {
		switch r.IntN(10) {
		case 0:
			return "" // a round may have nothing to embed
		case 1, 2:
			return crashText(r, 200+r.IntN(800)) // long
		}
		return crashText(r, 1+r.IntN(30))
	}
	s.msgs = append(s.msgs, Message{Role: User, Content: text(), Protected: r.IntN(20) == 0})
	if r.IntN(3) == 0 {
		call := Message{Role: Assistant, Content: text(), Reasoning: crashText(r, r.IntN(10))}
		for j := range 1 + r.IntN(3) {
			call.ToolCalls = append(call.ToolCalls, ToolCall{
				ID: fmt.Sprintf("call-%d-%d", n, j), Name: "search", Arguments: fmt.Sprintf(`{"q":%q}`, crashText(r, 1+r.IntN(5)))})
		}
		s.msgs = append(s.msgs, call)
		for _, c := range call.ToolCalls {
			s.msgs = append(s.msgs, Message{Role: Tool, Content: text(), ToolCallID: c.ID})
		}
	}
	s.msgs = append(s.msgs, Message{Role: Assistant, Content: text()})
}

var crashWords = []string{"apple", "river", "Lisbon", "flight", "über", "café", "紅茶", "x", "42", "quantum",
	"ledger", "rain", "Zürich", "moon", "δέλτα", "notebook", "train", "salt", "ok", "ticket"}

// crashText returns n random words.
func crashText(r *rand.Rand, n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = crashWords[r.IntN(len(crashWords))]
		if r.IntN(8) == 0 {
			words[i] += "."
		}
	}
	return strings.Join(words, " ")
}

// crashChild records the script from where the stored session ends,
// forever. It prints "ready" once the session is open and "ack N" after
// each Record of message N returns.
func crashChild(dir string) {
	out := bufio.NewWriter(os.Stdout)
	fail := func(err error) {
		fmt.Fprintln(out, "error", err)
		out.Flush()
		os.Exit(1)
	}
	seed, err := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	if err != nil {
		fail(err)
	}
	w, err := OpenStored(dir, crashSession, crashBudget, &Options{Recall: true})
	if err != nil {
		fail(err)
	}
	fmt.Fprintln(out, "ready")
	out.Flush()
	script := &crashScript{seed: seed}
	for n := w.Len(); ; n++ {
		if err := w.Record(ctx, script.message(n)); err != nil {
			fail(fmt.Errorf("record %d: %w", n, err))
		}
		fmt.Fprintln(out, "ack", n)
		out.Flush()
	}
}

func TestCrashRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	kills := 12
	if s := os.Getenv("MNEMO_CRASH_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	script := &crashScript{seed: seed}
	acked := -1 // the last message acknowledged
	stored := 0 // the messages a reopen has seen stored
	stale := 0  // kills that left some round's entry differing from its text
	// A kill lands between storing a message and re-indexing its round
	// one time in three or four: past the first kills, keep killing until
	// one has, so that every run tests the repair (3*kills at most).
	k := 0
	for ; k < kills || (stale == 0 && k < 3*kills); k++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashSeedEnv+"="+strconv.FormatUint(seed, 10))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			s := bufio.NewScanner(stdout)
			for s.Scan() {
				lines <- s.Text()
			}
			close(lines)
		}()
		handle := func(line string) {
			switch n, found := strings.CutPrefix(line, "ack "); {
			case found:
				acked, _ = strconv.Atoi(n)
			case line != "ready":
				t.Errorf("child: %s", line)
			}
		}
		// Most kills land while the child records, some while it opens
		// the session (and repairs what the previous kill left).
		var deadline <-chan time.Time
		if r.IntN(6) == 0 {
			deadline = time.After(time.Duration(r.IntN(60)) * time.Millisecond)
		}
		timeout := time.After(20 * time.Second)
	read:
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					break read
				}
				handle(line)
				if line == "ready" && deadline == nil {
					deadline = time.After(time.Duration(r.IntN(150)) * time.Millisecond)
				}
			case <-deadline:
				break read
			case <-timeout:
				t.Errorf("child not ready after 20s")
				break read
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines { // acks printed before the kill landed
			handle(line)
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: child ended by itself (%v): %s", k, err, stderr.Bytes())
		}
		if t.Failed() {
			t.FailNow()
		}
		raw := crashRawEntries(t, dir)
		var wasStale bool
		stored, wasStale = verifyCrashRecall(t, dir, script, max(acked+1, stored), raw)
		if wasStale {
			stale++
		}
		t.Logf("kill %d: %d messages stored, %d acknowledged, stale entry before reopen: %v", k, stored, acked+1, wasStale)
	}
	t.Logf("%d kills, %d messages stored (%d acknowledged), %d kills left a stale recall entry", k, stored, acked+1, stale)
}

// crashRawEntries returns the recall index in dir as the last kill left
// it, read directly before any window opens the session (and repairs
// it): the content of each entry by ID.
func crashRawEntries(t *testing.T, dir string) map[string]string {
	t.Helper()
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	c, err := db.Collection(crashSession + ".rounds")
	if errors.Is(err, mnemo.ErrCollectionNotFound) {
		return nil // killed before the session was first opened
	}
	if err != nil {
		t.Fatal(err)
	}
	return crashEntries(t, c.Scan)
}

// verifyCrashRecall opens the session in dir and checks that it holds
// the script's first want messages, or one more (stored, then killed
// before the ack), and that its recall index has exactly one entry per
// round with something to embed, holding the round's text. It returns
// the number of messages stored, and whether raw, the index before the
// reopen, had an entry missing or differing from its round's text:
// whether the kill landed between storing a message and re-indexing its
// round.
func verifyCrashRecall(t *testing.T, dir string, script *crashScript, want int, raw map[string]string) (stored int, stale bool) {
	t.Helper()
	w, err := OpenStored(dir, crashSession, crashBudget, &Options{Recall: true})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer w.Close()
	got, err := w.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != want && len(got) != want+1 {
		t.Fatalf("%d messages stored, want %d (or %d)", len(got), want, want+1)
	}
	for i, m := range got {
		if s := script.message(i); !crashSame(m, s) {
			t.Fatalf("message %d is %+v, want %+v", i, m, s)
		}
	}

	if err := w.mu.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.mu.Unlock()
	have := crashEntries(t, w.st.rounds.Get().Scan)
	rs := w.rounds()
	for i, rd := range rs {
		text := w.roundText(rd)
		id := strconv.Itoa(i)
		entry, ok := have[id]
		delete(have, id)
		if text != "" && raw[id] != text {
			stale = true
		}
		if _, err := w.st.space.Vector(ctx, "round", text); errors.Is(err, errNothing) {
			if ok {
				t.Errorf("round %d has nothing to embed but an entry %q", i, entry)
			}
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		switch {
		case !ok:
			t.Errorf("round %d of %d has no recall entry; its text:\n%.200s", i, len(rs), text)
		case entry != text:
			p := 0
			for p < min(len(entry), len(text)) && entry[p] == text[p] {
				p++
			}
			t.Errorf("round %d of %d: the recall entry (%d bytes) differs from the round's text (%d bytes) at byte %d: entry ...%.200q, text ...%.200q",
				i, len(rs), len(entry), len(text), p, entry[p:], text[p:])
		}
	}
	for id := range have {
		t.Errorf("recall entry %q, but there are %d rounds", id, len(rs))
	}
	if t.Failed() {
		t.FailNow()
	}
	return len(got), stale
}

// crashEntries returns the content of every record scan returns, by ID.
func crashEntries(t *testing.T, scan func(context.Context, string, int) ([]mnemo.Record, string, error)) map[string]string {
	t.Helper()
	have := map[string]string{}
	after := ""
	for {
		page, next, err := scan(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			have[r.ID] = r.Content
		}
		if next == "" {
			return have
		}
		after = next
	}
}

// crashSame reports whether a stored message is the script's one.
func crashSame(got, want Message) bool {
	return got.Role == want.Role && got.Content == want.Content && got.Reasoning == want.Reasoning &&
		got.ToolCallID == want.ToolCallID && got.Protected == want.Protected && slices.Equal(got.ToolCalls, want.ToolCalls)
}
