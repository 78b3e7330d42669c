package retrieval

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// An Index answers queries over the documents it was built from, with
// their ids best first.
type Index interface {
	Search(ctx context.Context, query string, k int) ([]string, error)
	Close() error
}

// LoCoMoReport is a method's evidence recall on LoCoMo.
type LoCoMoReport struct {
	Overall    Scores
	ByCategory map[int]Scores
	// Answered is the share of questions that got at least one hit.
	Answered float64
}

// EvaluateLoCoMo builds an index per conversation with build and asks it
// every question about that conversation for its top 10 turns.
func EvaluateLoCoMo(ctx context.Context, l *LoCoMo, build func(context.Context, []Turn) (Index, error)) (LoCoMoReport, error) {
	var t tally
	for _, conv := range l.Convs {
		idx, err := build(ctx, l.Turns[conv])
		if err != nil {
			return LoCoMoReport{}, fmt.Errorf("%s: %w", conv, err)
		}
		for _, q := range l.Questions {
			if q.Conv != conv {
				continue
			}
			ranked, err := idx.Search(ctx, q.Text, 10)
			if err != nil {
				idx.Close()
				return LoCoMoReport{}, fmt.Errorf("%s: %q: %w", conv, q.Text, err)
			}
			t.add(q.Category, ranked, q.Evidence)
		}
		if err := idx.Close(); err != nil {
			return LoCoMoReport{}, err
		}
	}
	return t.report(), nil
}

// tally adds up a LoCoMo report question by question.
type tally struct {
	all      Scores
	cats     map[int]Scores
	answered int
}

// add counts a question of category cat: the ids ranked for it, and
// its evidence.
func (t *tally) add(cat int, ranked, evidence []string) {
	if len(ranked) > 0 {
		t.answered++
	}
	t.all.add(ranked, evidence)
	if t.cats == nil {
		t.cats = map[int]Scores{}
	}
	s := t.cats[cat]
	s.add(ranked, evidence)
	t.cats[cat] = s
}

// report is the report of the questions counted.
func (t *tally) report() LoCoMoReport {
	r := LoCoMoReport{Overall: t.all.mean(), ByCategory: map[int]Scores{}}
	for c, s := range t.cats {
		r.ByCategory[c] = s.mean()
	}
	if t.all.Questions > 0 {
		r.Answered = float64(t.answered) / float64(t.all.Questions)
	}
	return r
}

// EvaluateCranfield builds one index over the collection and returns the
// mean nDCG@10 over its judged queries.
func EvaluateCranfield(ctx context.Context, c *Cranfield, build func(ctx context.Context, ids, docs []string) (Index, error)) (float64, error) {
	idx, err := build(ctx, c.DocIDs, c.Docs)
	if err != nil {
		return 0, err
	}
	defer idx.Close()
	var sum float64
	n := 0
	for i, q := range c.Querys {
		gain := c.Gain[c.QueryIDs[i]]
		if len(gain) == 0 {
			continue
		}
		ranked, err := idx.Search(ctx, q, 10)
		if err != nil {
			return 0, err
		}
		sum += NDCG(ranked, gain, 10)
		n++
	}
	return sum / float64(n), nil
}

// WriteTable writes a Markdown table of LoCoMo reports, one row a method.
func WriteTable(w io.Writer, names []string, reports []LoCoMoReport) {
	cats := []int{1, 2, 3, 4}
	head := []string{"method", "recall@10", "recall@5", "MRR", "answered"}
	for _, c := range cats {
		head = append(head, CategoryNames[c]+" r@10")
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for i, r := range reports {
		row := []string{names[i], f3(r.Overall.Recall10), f3(r.Overall.Recall5), f3(r.Overall.MRR), fmt.Sprintf("%.1f%%", 100*r.Answered)}
		for _, c := range cats {
			row = append(row, f3(r.ByCategory[c].Recall10))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
	}
	if len(reports) > 0 {
		keys := make([]int, 0)
		for c := range reports[0].ByCategory {
			keys = append(keys, c)
		}
		slices.Sort(keys)
		var parts []string
		for _, c := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", CategoryNames[c], reports[0].ByCategory[c].Questions))
		}
		fmt.Fprintf(w, "\nquestions: %d (%s)\n", reports[0].Overall.Questions, strings.Join(parts, ", "))
	}
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }
