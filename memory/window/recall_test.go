package window

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// pastaTurns is a conversation whose second round answers the last
// question, "Which pasta shape did you suggest?", and is the longest.
var pastaTurns = [][2]string{
	{"My locker code is 4711.", "Noted."},
	{"I am cooking a creamy mushroom sauce tonight. Which pasta shape goes best with it?", "Pappardelle: the wide ribbons hold a creamy sauce better than any other shape."},
	{"Any tips for a rainy weekend?", "Museums, a long lunch, a film."},
	{"Recommend a board game for four.", "Try Carcassonne."},
	{"What should I read next?", "Try The Name of the Rose by Umberto Eco."},
}

func pastaWindow(t *testing.T, budget int, opts *Options, question string) *Window {
	t.Helper()
	w, err := New(budget, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for _, tu := range pastaTurns {
		mustRecord(t, w, Message{Role: User, Content: tu[0]})
		mustRecord(t, w, Message{Role: Assistant, Content: tu[1]})
	}
	mustRecord(t, w, Message{Role: User, Content: question})
	return w
}

func tokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += DefaultCounter(m)
	}
	return n
}

// TestRecallRelevantRoundFits asks about the longest evicted round at
// budgets where the default share (25%) cannot hold it beside the
// header: 80 tokens (20 for recall, 11 of them the header's), where
// nothing used to be recalled, and 100, where the greedy fill skipped
// the pasta round and recalled the locker code instead. The relevant
// round must be recalled, within the budget, the newest round kept.
func TestRecallRelevantRoundFits(t *testing.T) {
	for _, budget := range []int{80, 100, 120} {
		w := pastaWindow(t, budget, &Options{Recall: true}, "Which pasta shape did you suggest?")
		got, rep, err := w.ContextReport(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) < 2 || got[0].Role != System || !strings.Contains(got[0].Content, "Pappardelle") {
			t.Fatalf("budget %d: the pasta round was not recalled: %q", budget, contents(got))
		}
		if len(rep.Recalled) == 0 || rep.Recalled[0].Round != 1 {
			t.Fatalf("budget %d: report recalled %+v, want round 1 first", budget, rep.Recalled)
		}
		if last := got[len(got)-1]; last.Content != "Which pasta shape did you suggest?" {
			t.Fatalf("budget %d: the newest round is not last: %q", budget, contents(got))
		}
		if n := tokens(got); n > budget || n != rep.Tokens {
			t.Fatalf("budget %d: %d tokens handed over, report says %d", budget, n, rep.Tokens)
		}
		if !slices.Contains(rep.Kept, len(pastaTurns)) {
			t.Fatalf("budget %d: report keeps %v, not the newest round", budget, rep.Kept)
		}
	}
}

// TestRecallMinSimilarity checks the cutoff: a question related to no
// round recalls nothing, the report says why, and the window then has
// the whole budget (it keeps more than the share it leaves recall).
func TestRecallMinSimilarity(t *testing.T) {
	const budget = 60
	opts := &Options{Recall: true, RecallShare: 0.5, MinSimilarity: new(float32(0.2))}
	w := pastaWindow(t, budget, opts, "Quel temps fait-il à Tokyo ?")
	got, rep, err := w.ContextReport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(contents(got), RecallHeader) || len(rep.Recalled) != 0 {
		t.Fatalf("recalled below the cutoff: %q, %+v", contents(got), rep.Recalled)
	}
	if len(rep.Dropped) == 0 {
		t.Fatal("the report names no dropped round")
	}
	for _, d := range rep.Dropped {
		if d.Reason != ReasonBelowCutoff || d.Similarity >= 0.2 {
			t.Fatalf("dropped %+v, want below the cutoff", d)
		}
	}
	if n := tokens(got); n <= budget/2 || n > budget {
		t.Fatalf("%d tokens: the window did not get the whole budget of %d", n, budget)
	}
	// The same question with the cutoff off recalls the best round there is.
	opts.MinSimilarity = new(float32(-1))
	w = pastaWindow(t, budget, opts, "Quel temps fait-il à Tokyo ?")
	if _, rep, err := w.ContextReport(ctx); err != nil || len(rep.Recalled) == 0 {
		t.Fatalf("cutoff -1 recalled nothing: %+v, %v", rep, err)
	}
}

// TestRecallNoRoomReported checks that a relevant round too large for
// the budget, even with every optional kept round left out, is reported
// as dropped for lack of room and the window is returned whole.
func TestRecallNoRoomReported(t *testing.T) {
	w := pastaWindow(t, 40, &Options{Recall: true}, "Which pasta shape did you suggest?")
	got, rep, err := w.ContextReport(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Dropped, func(d RecallItem) bool { return d.Round == 1 })
	if i < 0 || rep.Dropped[i].Reason != ReasonNoRoom {
		t.Fatalf("the pasta round is not reported as too large: %+v", rep.Dropped)
	}
	if strings.Contains(contents(got), "Pappardelle") || tokens(got) > 40 {
		t.Fatalf("Context = %q", contents(got))
	}
}

func TestRecallMinSimilarityInvalid(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), 1.5, -2} {
		if _, err := New(100, &Options{Recall: true, MinSimilarity: new(v)}); !errors.Is(err, ErrInvalid) {
			t.Errorf("MinSimilarity %v: %v, want ErrInvalid", v, err)
		}
	}
}
