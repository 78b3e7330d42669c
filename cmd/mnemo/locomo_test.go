package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo/bench/retrieval"
)

// locomoDir is LoCoMo's development half, relative to this package's
// directory; the tests that read it skip when it is absent.
const locomoDir = "../../../shared/data/locomo-dev"

// adaptersLoCoMo is the retrieval the command line's default path must
// equal: the memory adapters' own, a fact store's default path with each
// turn stored in its conversation's session (retrieval.SemanticFacts).
func adaptersLoCoMo(*testing.T) func(context.Context, []retrieval.Turn) (retrieval.Index, error) {
	return retrieval.SemanticFacts
}

// TestLoCoMoDefaultMatchesAdapters imports each LoCoMo conversation with
// mnemo import (a line per turn: "Speaker: text", the conversation as its
// group, the turn's index as its position, embedded by --embedder
// hashing) and asks every question with mnemo query's defaults: its
// evidence recall@10 must be the adapters' within 0.005, on an embedded
// database and on PostgreSQL (when MNEMO_PG_DSN names one).
func TestLoCoMoDefaultMatchesAdapters(t *testing.T) {
	if raceEnabled {
		t.Skip("a ranking test of 1,000 questions; minutes under the race detector")
	}
	l, err := retrieval.LoadLoCoMo(locomoDir)
	if errors.Is(err, retrieval.ErrNoData) {
		t.Skip("LoCoMo data not present")
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// PostgreSQL, whose import is slower, imports the first conversation
	// alone.
	first := &retrieval.LoCoMo{Convs: l.Convs[:1], Turns: l.Turns, Questions: l.Questions}
	backends := []struct {
		name string
		data *retrieval.LoCoMo
		db   func(*testing.T) string // a new database for --db
	}{
		{"embedded", l, func(t *testing.T) string { return filepath.Join(t.TempDir(), "db") }},
		{"postgres", first, serverDB},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			cli, err := retrieval.EvaluateLoCoMo(ctx, b.data, cliLoCoMo(t, b.data, b.db, nil))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := retrieval.EvaluateLoCoMo(ctx, b.data, adaptersLoCoMo(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("LoCoMo dev, %d conversations, %d questions, evidence recall@10: command line %.4f, adapters %.4f",
				len(b.data.Convs), cli.Overall.Questions, cli.Overall.Recall10, ref.Overall.Recall10)
			if d := math.Abs(cli.Overall.Recall10 - ref.Overall.Recall10); d > 0.005 {
				t.Errorf("the command line's recall@10 %.4f is %.4f from the adapters' %.4f, want at most 0.005", cli.Overall.Recall10, d, ref.Overall.Recall10)
			}
		})
	}
}

// cliLoCoMo returns a retrieval.Index builder that imports a
// conversation's turns with mnemo import, into a database of its own
// that newDB makes, and answers the questions of l about it
// with one mnemo query --queries (K 10) with the flags queryFlags: the
// Index then looks their answers up.
func cliLoCoMo(t *testing.T, l *retrieval.LoCoMo, newDB func(*testing.T) string, queryFlags []string) func(context.Context, []retrieval.Turn) (retrieval.Index, error) {
	return func(ctx context.Context, turns []retrieval.Turn) (retrieval.Index, error) {
		var in strings.Builder
		for _, tu := range turns {
			line, err := json.Marshal(map[string]any{"id": tu.DiaID, "content": retrieval.SpeakerText(tu), "group": tu.Conv, "position": tu.Position})
			if err != nil {
				return nil, err
			}
			in.Write(append(line, '\n'))
		}
		dir := newDB(t)
		var out, errOut bytes.Buffer
		if code := run(ctx, []string{"import", "--db", dir, "--collection", "turns", "--embedder", "hashing", "--file", writeTemp(t, in.String())}, &out, &errOut); code != 0 {
			return nil, fmt.Errorf("import: exit %d: %s", code, errOut.String())
		}
		var queries strings.Builder
		var texts []string
		for _, q := range l.Questions {
			if q.Conv == turns[0].Conv {
				line, _ := json.Marshal(map[string]any{"id": len(texts), "text": q.Text})
				queries.Write(append(line, '\n'))
				texts = append(texts, q.Text)
			}
		}
		out.Reset()
		args := append([]string{"query", "--db", dir, "--collection", "turns", "--queries", writeTemp(t, queries.String())}, queryFlags...)
		if code := run(ctx, args, &out, &errOut); code != 0 {
			return nil, fmt.Errorf("query: exit %d: %s", code, errOut.String())
		}
		ix := cliIndex{}
		for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			var a jsonAnswer
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				return nil, fmt.Errorf("answer %d: %v", i, err)
			}
			if string(a.ID) != fmt.Sprint(i) {
				return nil, fmt.Errorf("answer %d has id %s", i, a.ID)
			}
			ids := make([]string, len(a.Hits))
			for j, h := range a.Hits {
				ids[j] = h.ID
			}
			ix[texts[i]] = ids
		}
		return ix, nil
	}
}

// A cliIndex holds mnemo query's answers (top 10) to the questions about
// one conversation, by question.
type cliIndex map[string][]string

func (ix cliIndex) Search(_ context.Context, query string, k int) ([]string, error) {
	ids, ok := ix[query]
	if !ok || k != 10 {
		return nil, fmt.Errorf("no answer of mnemo query to %q with k %d", query, k)
	}
	return ids, nil
}

func (ix cliIndex) Close() error { return nil }
