package window

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// plantedFacts are told early in a long conversation and asked about after
// they have left the window.
var plantedFacts = []struct{ fact, question, answer string }{
	{"My sister's name is Alice.", "What is my sister's name again?", "Alice"},
	{"The project codename is Falcon.", "Remind me, what is the project codename?", "Falcon"},
	{"I parked the car on level 4 of the garage.", "Where did I park the car?", "level 4"},
	{"My flight leaves from gate B12 at 7:45.", "Which gate does my flight leave from?", "B12"},
	{"The guest wifi password is tulip-42.", "What was the guest wifi password?", "tulip-42"},
	{"My dentist appointment is on Thursday.", "When is my dentist appointment?", "Thursday"},
	{"The staging server listens on port 8443.", "Which port does the staging server listen on?", "8443"},
	{"My manager is called Priya.", "What is my manager called?", "Priya"},
	{"I am allergic to shellfish.", "What am I allergic to?", "shellfish"},
	{"The offsite budget is 12000 euros.", "How big is the offsite budget?", "12000"},
}

var fillerTopics = []string{"the weather", "a football match", "a new recipe", "traffic on the ring road", "a film I saw",
	"the coffee machine", "a podcast", "the gym schedule", "a birthday card", "the printer"}

// BenchmarkRecall replays a long conversation (each planted fact followed by
// 12 rounds of small talk) through a window of 160 tokens, then asks about
// every fact, and reports how often the context handed to the model holds
// the answer, with recall on (25% of the budget) and off.
func BenchmarkRecall(b *testing.B) {
	for _, recall := range []bool{false, true} {
		b.Run(fmt.Sprintf("recall=%v", recall), func(b *testing.B) {
			var rate float64
			for b.Loop() {
				var err error
				if rate, err = recallRate(recall); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(rate, "answer-in-context")
		})
	}
}

func recallRate(recall bool) (float64, error) {
	r := rand.New(rand.NewPCG(7, 7))
	w, err := New(160, &Options{Recall: recall})
	if err != nil {
		return 0, err
	}
	defer w.Close()
	say := func(role Role, text string) {
		if err == nil {
			err = w.Record(ctx, Message{Role: role, Content: text})
		}
	}
	for _, f := range plantedFacts {
		say(User, f.fact)
		say(Assistant, "Noted, I will remember that.")
		for i := 0; i < 12; i++ {
			topic := fillerTopics[r.IntN(len(fillerTopics))]
			say(User, fmt.Sprintf("By the way, what do you think about %s?", topic))
			say(Assistant, fmt.Sprintf("I have no strong opinion on %s, but it sounds nice.", topic))
		}
	}
	hits := 0
	for _, f := range plantedFacts {
		say(User, f.question)
		msgs, cerr := w.Context(ctx)
		if err == nil {
			err = cerr
		}
		var all strings.Builder
		for _, m := range msgs {
			all.WriteString(m.Content)
		}
		if strings.Contains(all.String(), f.answer) {
			hits++
		}
		say(Assistant, "Let me check my notes.")
	}
	return float64(hits) / float64(len(plantedFacts)), err
}

// TestRecallHelps is the benchmark's claim as a test: recall brings back
// most of the planted facts, and without it none survive.
func TestRecallHelps(t *testing.T) {
	off, err := recallRate(false)
	if err != nil {
		t.Fatal(err)
	}
	on, err := recallRate(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("answer in context: recall off %.2f, on %.2f", off, on)
	if off != 0 || on < 0.7 {
		t.Fatalf("recall off %.2f, on %.2f", off, on)
	}
}
