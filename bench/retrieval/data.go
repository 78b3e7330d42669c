package retrieval

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ErrNoData reports a data set directory that is absent.
var ErrNoData = errors.New("retrieval: data set not present")

// Turn is one dialogue turn of a LoCoMo conversation.
type Turn struct {
	Conv     string `json:"conv_id"`
	Session  int    `json:"session"`
	DateTime string `json:"date_time"` // of the session, e.g. "1:56 pm on 8 May, 2023"
	DiaID    string `json:"dia_id"`    // e.g. "D1:3"
	Speaker  string `json:"speaker"`
	Text     string `json:"text"`
	Position int    `json:"-"` // index of the turn in its conversation, from 0
}

// Question is a LoCoMo question with the turns that hold its answer.
type Question struct {
	Conv     string   `json:"conv_id"`
	Text     string   `json:"question"`
	Category int      `json:"category"` // 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
	Evidence []string `json:"evidence_valid"`
}

// CategoryNames names LoCoMo's question categories.
var CategoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// LoCoMo is a set of conversations and questions about them.
type LoCoMo struct {
	Convs     []string          // conversation ids, in file order
	Turns     map[string][]Turn // by conversation, in order
	Questions []Question        // those with evidence
}

// LoadLoCoMo reads turns.jsonl and qa.jsonl from dir.
func LoadLoCoMo(dir string) (*LoCoMo, error) {
	l := &LoCoMo{Turns: map[string][]Turn{}}
	err := readLines(filepath.Join(dir, "turns.jsonl"), func(line []byte) error {
		var t Turn
		if err := json.Unmarshal(line, &t); err != nil {
			return err
		}
		if _, ok := l.Turns[t.Conv]; !ok {
			l.Convs = append(l.Convs, t.Conv)
		}
		t.Position = len(l.Turns[t.Conv])
		l.Turns[t.Conv] = append(l.Turns[t.Conv], t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readLines(filepath.Join(dir, "qa.jsonl"), func(line []byte) error {
		var q Question
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		if len(q.Evidence) > 0 {
			l.Questions = append(l.Questions, q)
		}
		return nil
	})
	return l, err
}

// Cranfield is the Cranfield 1400 collection with graded judgements.
type Cranfield struct {
	DocIDs, Docs     []string
	QueryIDs, Querys []string
	// Gain of each judged document per query: 5 - grade, so a complete
	// answer (grade 1) gains 4 and one of minimal interest (grade 4) 1.
	Gain map[string]map[string]float64
}

// LoadCranfield reads docs.jsonl, queries.jsonl and qrels.tsv from dir.
func LoadCranfield(dir string) (*Cranfield, error) {
	c := &Cranfield{Gain: map[string]map[string]float64{}}
	err := readLines(filepath.Join(dir, "docs.jsonl"), func(line []byte) error {
		var d struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return err
		}
		c.DocIDs = append(c.DocIDs, d.ID)
		c.Docs = append(c.Docs, d.Text)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readLines(filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		c.QueryIDs = append(c.QueryIDs, q.ID)
		c.Querys = append(c.Querys, q.Text)
		return nil
	})
	if err != nil {
		return nil, err
	}
	first := true
	err = readLines(filepath.Join(dir, "qrels.tsv"), func(line []byte) error {
		if first {
			first = false
			return nil
		}
		parts := strings.Split(string(line), "\t")
		if len(parts) != 3 {
			return fmt.Errorf("qrels line %q", line)
		}
		grade, err := strconv.Atoi(parts[2])
		if err != nil || grade < 1 || grade > 4 {
			return nil // out-of-range grades are not judgements
		}
		if c.Gain[parts[0]] == nil {
			c.Gain[parts[0]] = map[string]float64{}
		}
		c.Gain[parts[0]][parts[1]] = float64(5 - grade)
		return nil
	})
	return c, err
}

func readLines(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNoData, path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for s.Scan() {
		n++
		if len(strings.TrimSpace(s.Text())) == 0 {
			continue
		}
		if err := fn(s.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	return s.Err()
}

// NDCG returns nDCG@k of a ranking (gain 2^g - 1, log2 discount).
func NDCG(ranked []string, gain map[string]float64, k int) float64 {
	var dcg float64
	for i, d := range ranked[:min(k, len(ranked))] {
		dcg += (math.Pow(2, gain[d]) - 1) / math.Log2(float64(i+2))
	}
	var gains []float64
	for _, g := range gain {
		gains = append(gains, g)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(gains)))
	var idcg float64
	for i, g := range gains[:min(k, len(gains))] {
		idcg += (math.Pow(2, g) - 1) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Scores are a method's LoCoMo figures over a set of questions.
type Scores struct {
	Questions              int
	Recall10, Recall5, MRR float64
}

func (s *Scores) add(ranked, evidence []string) {
	s.Questions++
	s.Recall10 += recall(ranked, evidence, 10)
	s.Recall5 += recall(ranked, evidence, 5)
	for i, id := range ranked {
		if slices.Contains(evidence, id) {
			s.MRR += 1 / float64(i+1)
			break
		}
	}
}

func (s Scores) mean() Scores {
	if s.Questions == 0 {
		return s
	}
	n := float64(s.Questions)
	return Scores{s.Questions, s.Recall10 / n, s.Recall5 / n, s.MRR / n}
}

func recall(ranked, evidence []string, k int) float64 {
	hit := 0
	for _, e := range evidence {
		if slices.Contains(ranked[:min(k, len(ranked))], e) {
			hit++
		}
	}
	return float64(hit) / float64(len(evidence))
}
