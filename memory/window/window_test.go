package window

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

var ctx = context.Background()

// each message costs its content length in tokens, to make budgets easy.
func byLen(m Message) int { return len(m.Content) }

func contents(ms []Message) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, " ")
}

// conversation records: sys, then rounds u1 a1 / u2 a2 c2(tool call) t2 / u3 a3.
func conversation(t *testing.T, w *Window, protectRound2 bool) {
	t.Helper()
	rec := func(m Message, protected bool) {
		t.Helper()
		var err error
		if protected {
			err = w.RecordProtected(ctx, m)
		} else {
			err = w.Record(ctx, m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	rec(Message{Role: System, Content: "sys"}, false)
	rec(Message{Role: User, Content: "u1"}, false)
	rec(Message{Role: Assistant, Content: "a1"}, false)
	rec(Message{Role: User, Content: "u2"}, protectRound2)
	rec(Message{Role: Assistant, Content: "c2", ToolCalls: []ToolCall{{ID: "call-1", Name: "search", Arguments: `{"q":"x"}`}}}, false)
	rec(Message{Role: Tool, Content: "t2", ToolCallID: "call-1"}, false)
	rec(Message{Role: User, Content: "u3"}, false)
	rec(Message{Role: Assistant, Content: "a3"}, false)
}

func TestWindowBudgets(t *testing.T) {
	tests := []struct {
		budget  int
		protect bool
		want    string
	}{
		{1, false, "u3 a3"},                      // smaller than one round: the newest is kept anyway
		{4, false, "u3 a3"},                      // exactly one round
		{7, false, "u3 a3"},                      // round 2 (6 tokens) does not fit, so nothing older either
		{10, false, "u2 c2 t2 u3 a3"},            // the tool call and its result stay together
		{14, false, "u1 a1 u2 c2 t2 u3 a3"},      // three rounds
		{100, false, "sys u1 a1 u2 c2 t2 u3 a3"}, // everything
		{1, true, "u2 c2 t2 u3 a3"},              // a protected round survives any budget
		{14, true, "u1 a1 u2 c2 t2 u3 a3"},       // protected counted first, then newest-first
		{12, true, "u2 c2 t2 u3 a3"},             // round 1 would make 14
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("budget %d protected %v", tt.budget, tt.protect), func(t *testing.T) {
			w, _ := New(tt.budget, &Options{Counter: byLen})
			conversation(t, w, tt.protect)
			got, _ := w.Context(ctx)
			if contents(got) != tt.want {
				t.Fatalf("got %q, want %q", contents(got), tt.want)
			}
		})
	}
}

func TestRaisingTheBudgetRestoresHistory(t *testing.T) {
	w, _ := New(4, &Options{Counter: byLen})
	conversation(t, w, false)
	if got, _ := w.Context(ctx); contents(got) != "u3 a3" {
		t.Fatalf("small budget: %q", contents(got))
	}
	w.SetBudget(1000)
	if got, _ := w.Context(ctx); contents(got) != "sys u1 a1 u2 c2 t2 u3 a3" {
		t.Fatalf("raised budget: %q", contents(got))
	}
}

func TestContextIsACopy(t *testing.T) {
	w, _ := New(100, nil)
	w.Record(ctx, Message{Role: User, Content: "hi"})
	w.Record(ctx, Message{Role: Assistant, Content: "x", ToolCalls: []ToolCall{{ID: "1", Name: "n"}}})
	got, _ := w.Context(ctx)
	got[0].Content = "changed"
	got[1].ToolCalls[0].Name = "changed"
	again, _ := w.Context(ctx)
	if again[0].Content != "hi" || again[1].ToolCalls[0].Name != "n" {
		t.Fatal("mutating the returned context changed the window")
	}
}

func TestDefaultCounter(t *testing.T) {
	tests := []struct {
		m    Message
		want int
	}{
		{Message{Content: ""}, 0},
		{Message{Content: "abcd"}, 1},
		{Message{Content: "abcde"}, 2},
		{Message{Content: "日本語"}, 3},
		{Message{Content: "日本語 ok"}, 3 + 1},            // 3 ideographs + ceil(3/4)
		{Message{Content: "abcd", Reasoning: "ab"}, 2}, // pieces are counted apart
		{Message{ToolCalls: []ToolCall{{Name: "a_very_long_tool_name", Arguments: `{"a":1}`}}}, 2},
	}
	for _, tt := range tests {
		if got := DefaultCounter(tt.m); got != tt.want {
			t.Errorf("DefaultCounter(%+v) = %d, want %d", tt.m, got, tt.want)
		}
	}
}

func TestBadMessages(t *testing.T) {
	w, _ := New(10, nil)
	tests := []struct {
		m    Message
		want error
	}{
		{Message{Role: "robot", Content: "x"}, ErrInvalid},
		{Message{Role: User, Content: "bad \xff"}, ErrInvalid},
		{Message{Role: Assistant, ToolCalls: []ToolCall{{ID: "1", Arguments: "\xc3"}}}, ErrInvalid},
		{Message{Role: User, ToolCalls: []ToolCall{{ID: "1"}}}, ErrInvalid},
		{Message{Role: Assistant, ToolCalls: []ToolCall{{Name: "no id"}}}, ErrInvalid},
		{Message{Role: Tool, Content: "r"}, ErrInvalid},
		{Message{Role: User, ToolCallID: "1"}, ErrInvalid},
		{Message{Role: Tool, Content: "r", ToolCallID: "never-called"}, ErrUnknownToolCall},
	}
	for _, tt := range tests {
		if err := w.Record(ctx, tt.m); !errors.Is(err, tt.want) {
			t.Errorf("Record(%+v) = %v, want %v", tt.m, err, tt.want)
		}
	}
	if got, _ := w.Context(ctx); len(got) != 0 {
		t.Fatalf("rejected messages were recorded: %v", got)
	}
	if _, err := New(0, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("budget 0: %v", err)
	}
}

// TestWindowProperties checks random conversations: the context is
// chronological, made of whole rounds, holds the newest round and every
// protected round, fits the budget unless those alone exceed it, and
// pairs tool calls and results as chat APIs require. The random messages
// include out-of-order tool results, which Record must refuse.
func TestWindowProperties(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for iter := 0; iter < 300; iter++ {
		budget := 1 + r.IntN(60)
		w, _ := New(budget, &Options{Counter: byLen})
		var all []Message
		var protected []bool
		calls := 0
		for i := 0; i < 1+r.IntN(30); i++ {
			var m Message
			switch x := r.IntN(10); {
			case x < 3:
				m = Message{Role: User}
			case x < 5 && calls > 0:
				// Mostly a call of the last assistant message, some older.
				m = Message{Role: Tool, ToolCallID: fmt.Sprint("c", calls-1-r.IntN(min(calls, 4)))}
			case x < 7:
				m = Message{Role: Assistant}
				for range 1 + r.IntN(2) {
					m.ToolCalls = append(m.ToolCalls, ToolCall{ID: fmt.Sprint("c", calls), Name: "f"})
					calls++
				}
			default:
				m = Message{Role: Assistant}
			}
			m.Content = fmt.Sprintf("m%d%s", i, strings.Repeat(".", r.IntN(8)))
			p := r.IntN(12) == 0
			var err error
			if p {
				err = w.RecordProtected(ctx, m)
			} else {
				err = w.Record(ctx, m)
			}
			if err != nil {
				if !errors.Is(err, ErrUnansweredToolCalls) && !errors.Is(err, ErrSeparatedToolResult) && !errors.Is(err, ErrUnknownToolCall) && !errors.Is(err, ErrInvalid) {
					t.Fatalf("seed %d iter %d: Record(%+v) = %v", seed, iter, m, err)
				}
				continue
			}
			all, protected = append(all, m), append(protected, p)
		}
		got, _ := w.Context(ctx)
		checkPairing(t, got)
		// Chronological and made of whole rounds: got is a subsequence of
		// all, and each kept round is kept whole.
		idx := map[string]int{}
		for i, m := range all {
			idx[m.Content] = i
		}
		roundOf := make([]int, len(all))
		rnd := 0
		for i, m := range all {
			if i > 0 && m.Role == User {
				rnd++
			}
			roundOf[i] = rnd
		}
		keptRounds := map[int]int{}
		prev, tokens := -1, 0
		for _, m := range got {
			i := idx[m.Content]
			if i <= prev {
				t.Fatalf("seed %d iter %d: context out of order", seed, iter)
			}
			prev = i
			keptRounds[roundOf[i]]++
			tokens += len(m.Content)
		}
		size := map[int]int{}
		mandatory := 0
		for i := range all {
			size[roundOf[i]]++
		}
		for i := range all {
			rd := roundOf[i]
			if keptRounds[rd] != 0 && keptRounds[rd] != size[rd] {
				t.Fatalf("seed %d iter %d: round %d kept in part", seed, iter, rd)
			}
			if (rd == rnd || protected[i]) && keptRounds[rd] == 0 {
				t.Fatalf("seed %d iter %d: round %d (newest or protected) dropped", seed, iter, rd)
			}
		}
		for rd := range size {
			hasProt := false
			for i := range all {
				hasProt = hasProt || (roundOf[i] == rd && protected[i])
			}
			if rd == rnd || hasProt {
				for i := range all {
					if roundOf[i] == rd {
						mandatory += len(all[i].Content)
					}
				}
			}
		}
		if tokens > budget && tokens > mandatory {
			t.Fatalf("seed %d iter %d: %d tokens over budget %d (mandatory %d)", seed, iter, tokens, budget, mandatory)
		}
	}
}

// checkPairing fails t unless every tool result in ms directly follows
// the assistant message that made its call (with only results of that
// message between them), and every call is answered before the next
// message that is not a result, as chat APIs require; only the calls of
// the last assistant message may still wait.
func checkPairing(t *testing.T, ms []Message) {
	t.Helper()
	var open map[string]bool
	for i, m := range ms {
		if m.Role == Tool {
			if answered, ok := open[m.ToolCallID]; !ok || answered {
				t.Fatalf("message %d: result for %q without its call right before it: %+v", i, m.ToolCallID, ms)
			}
			open[m.ToolCallID] = true
			continue
		}
		for id, answered := range open {
			if !answered {
				t.Fatalf("message %d: call %q unanswered before a %s message: %+v", i, id, m.Role, ms)
			}
		}
		open = map[string]bool{}
		for _, c := range m.ToolCalls {
			open[c.ID] = false
		}
	}
}

func TestConcurrentWindow(t *testing.T) {
	w, _ := New(50, nil)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				w.Record(ctx, Message{Role: User, Content: fmt.Sprint(g, i)})
				w.Context(ctx)
			}
		}(g)
	}
	wg.Wait()
	w.SetBudget(1 << 20)
	if got, _ := w.Context(ctx); len(got) != 400 {
		t.Fatalf("%d messages", len(got))
	}
}

func TestRecallShareOutOfRange(t *testing.T) {
	for _, share := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1, 1.5, -0.1} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			w, err := New(10, &Options{Recall: true, RecallShare: share})
			if err == nil {
				w.Close()
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("New with RecallShare %v = %v, want ErrInvalid", share, err)
			}
		})
	}
}
