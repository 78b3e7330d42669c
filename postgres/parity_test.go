package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/bench/retrieval"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

// parityQuestions is how many questions of each data set TestParity asks
// unless MNEMO_PG_PARITY_N says otherwise (0 or "all": every one).
const parityQuestions = 200

// raceDetector is set when the tests run under the race detector
// (race_test.go).
var raceDetector bool

// posField is the metadata field in which the memory adapters keep a
// record's place in its conversation, and over which they spread scores
// (memory/internal/textvec: PosField, with weight 0.5 and window 2).
const posField = "mnemo.pos"

// TestParity: real data in both backends answers alike. The LoCoMo
// conversations (one collection each, the turns as "Speaker: text" with
// their speaker, session and place as metadata) and the Cranfield
// documents, embedded by the offline hashing embedder, go into the
// engine and PostgreSQL; then each question is asked of both as a text,
// an exact vector and a hybrid query (exact on its vector side), k 15 (the top 10 and five more),
// and on LoCoMo also as the memory adapters ask (hybrid or text, with the
// query's vector and score spreading) and with a metadata filter. Both
// must return the same IDs in the same order (equal scores order by ID on
// both; see hitsDiff for near ties), with Score and TextScore within 1e-6
// and Similarity within 1e-4 (relative above 1).
//
// MNEMO_PG_PARITY_N sets how many questions of each data set are asked
// (spread over the set; default parityQuestions; 0 or "all": every one).
// Skipped with -short: at the default it took about two minutes on a
// 2-core machine when it was written, most of it PostgreSQL's loading and
// its text queries, which scored every matching record per query then.
// Skipped under the race detector too: it asks one query at a time, and
// the detector made the engine's loading alone take 45 s.
func TestParity(t *testing.T) {
	if testing.Short() {
		t.Skip("minutes of loading and querying; run without -short")
	}
	if raceDetector {
		t.Skip("one query at a time, and minutes of loading under the race detector")
	}
	serverDSN(t)
	n := parityQuestions
	if v := os.Getenv("MNEMO_PG_PARITY_N"); v == "all" || v == "0" {
		n = math.MaxInt
	} else if v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			t.Fatalf("MNEMO_PG_PARITY_N=%q: want a number of questions, or all", v)
		}
	}
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p := &parity{engine: db.Store(), pg: openFresh(t)}
	t.Cleanup(func() { p.pg.Close() })
	p.emb, _ = embed.NewHashing(0)
	t.Run("LoCoMo", func(t *testing.T) { p.locomo(t, n) })
	t.Run("Cranfield", func(t *testing.T) { p.cranfield(t, n) })
}

// parity holds the two stores TestParity compares.
type parity struct {
	engine, pg mnemo.Store
	emb        *embed.Hashing
}

// pair is one collection in both stores: the engine's and PostgreSQL's.
type pair struct{ engine, pg mnemo.Collection }

// create makes the collection name in both stores and stores recs in
// both, in batches of 100, adding the time each took to spent.
func (p *parity) create(t *testing.T, name string, recs []mnemo.Record, spent *[2]time.Duration) pair {
	t.Helper()
	ctx := context.Background()
	cfg := mnemo.CollectionConfig{Dimension: p.emb.Dimension(), Embedder: p.emb.Identity()}
	var cols [2]mnemo.Collection
	for i, s := range []mnemo.Store{p.engine, p.pg} {
		start := time.Now()
		c, err := s.CreateCollection(ctx, name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < len(recs); j += 100 {
			if _, err := c.Upsert(ctx, recs[j:min(j+100, len(recs))]...); err != nil {
				t.Fatal(err)
			}
		}
		cols[i] = c
		spent[i] += time.Since(start)
	}
	return pair{cols[0], cols[1]}
}

// loaded logs how long each backend took to load what.
func loaded(t *testing.T, what string, spent [2]time.Duration) {
	t.Helper()
	t.Logf("loaded %s: the engine in %v, PostgreSQL in %v", what, spent[0].Round(time.Millisecond), spent[1].Round(time.Millisecond))
}

// evenly picks n of m items, spread evenly over them; all of them when n
// is at least m.
func evenly(n, m int) []int {
	if n >= m {
		n = m
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i * m / n
	}
	return out
}

func (p *parity) locomo(t *testing.T, n int) {
	l, err := retrieval.LoadLoCoMo(filepath.Join(dataDir, "locomo-dev"))
	if errors.Is(err, retrieval.ErrNoData) {
		t.Skipf("data not present: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var spent [2]time.Duration
	cols := map[string]pair{}
	speakers := map[string][]string{} // each conversation's speakers, in order of appearance
	for _, conv := range l.Convs {
		turns := l.Turns[conv]
		texts := make([]string, len(turns))
		for i, tn := range turns {
			texts[i] = retrieval.SpeakerText(tn)
			if !slices.Contains(speakers[conv], tn.Speaker) {
				speakers[conv] = append(speakers[conv], tn.Speaker)
			}
		}
		recs := make([]mnemo.Record, len(turns))
		for i, v := range mustEmbed(t, p.emb, texts) {
			tn := turns[i]
			recs[i] = mnemo.Record{ID: tn.DiaID, Vector: v, Content: texts[i], Metadata: map[string]any{
				"speaker": tn.Speaker, "session": tn.Session, "date": tn.DateTime, posField: tn.Position}}
		}
		cols[conv] = p.create(t, "locomo-"+conv, recs, &spent)
	}
	loaded(t, fmt.Sprintf("%d conversations", len(l.Convs)), spent)
	start := time.Now()
	asked := evenly(n, len(l.Questions))
	qtexts := make([]string, len(asked))
	for i, qi := range asked {
		qtexts[i] = l.Questions[qi].Text
	}
	qvecs := mustEmbed(t, p.emb, qtexts)
	var cmp comparer
	adapters := &mnemo.Spread{Position: posField, Weight: 0.5, Window: 2}
	early, err := mnemo.ParseFilter(`{"session": {"$lte": 10}}`)
	if err != nil {
		t.Fatal(err)
	}
	for i, qi := range asked {
		q := l.Questions[qi]
		c := cols[q.Conv]
		for _, mode := range modes {
			cmp.check(t, c, string(mode), q.Text, parityQuery(mode, q.Text, qvecs[i]))
		}
		// The adapters' search, hybrid or text in turn: the query's
		// vector in either mode, scores spread to the neighbours.
		sq := mnemo.Query{Mode: []mnemo.Mode{mnemo.ModeHybrid, mnemo.ModeText}[i%2], Text: q.Text, Vector: qvecs[i],
			K: 15, Exact: true, Spread: adapters}
		cmp.check(t, c, string(sq.Mode)+"+spread", q.Text, sq)
		// A filter on each question, in turn: a speaker's turns (text),
		// the first ten sessions (vector), or both (hybrid).
		speaker := speakers[q.Conv][i%len(speakers[q.Conv])]
		who, err := mnemo.ParseFilter(fmt.Sprintf(`{"speaker": %q}`, speaker))
		if err != nil {
			t.Fatal(err)
		}
		both, err := mnemo.ParseFilter(fmt.Sprintf(`{"$and": [{"speaker": %q}, {"session": {"$lte": 10}}]}`, speaker))
		if err != nil {
			t.Fatal(err)
		}
		mode := modes[i%len(modes)]
		fq := parityQuery(mode, q.Text, qvecs[i])
		fq.Filter = map[mnemo.Mode]*mnemo.Filter{mnemo.ModeText: who, mnemo.ModeVector: early, mnemo.ModeHybrid: both}[mode]
		cmp.check(t, c, string(mode)+"+filter", q.Text, fq)
	}
	cmp.summary(t, len(asked), time.Since(start))
}

func (p *parity) cranfield(t *testing.T, n int) {
	cf, err := retrieval.LoadCranfield(filepath.Join(dataDir, "cranfield"))
	if errors.Is(err, retrieval.ErrNoData) {
		t.Skipf("data not present: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var ids, docs []string
	for i, d := range cf.Docs {
		if strings.TrimSpace(d) != "" {
			ids, docs = append(ids, cf.DocIDs[i]), append(docs, d)
		}
	}
	recs := make([]mnemo.Record, len(docs))
	for i, v := range mustEmbed(t, p.emb, docs) {
		recs[i] = mnemo.Record{ID: ids[i], Vector: v, Content: docs[i]}
	}
	var spent [2]time.Duration
	c := p.create(t, "cranfield", recs, &spent)
	loaded(t, fmt.Sprintf("%d documents", len(recs)), spent)
	start := time.Now()
	asked := evenly(n, len(cf.Querys))
	qtexts := make([]string, len(asked))
	for i, qi := range asked {
		qtexts[i] = cf.Querys[qi]
	}
	qvecs := mustEmbed(t, p.emb, qtexts)
	var cmp comparer
	for i, text := range qtexts {
		for _, mode := range modes {
			cmp.check(t, c, string(mode), text, parityQuery(mode, text, qvecs[i]))
		}
	}
	cmp.summary(t, len(asked), time.Since(start))
}

// parityQuery is query with k 15 and an exact vector side: the top 10
// and five more, so that a near tie at the 10th place is seen whole (see
// hitsDiff).
func parityQuery(mode mnemo.Mode, text string, vec []float32) mnemo.Query {
	q := query(mode, text, vec, 15)
	q.Exact = q.Vector != nil
	return q
}

// comparer asks queries of both backends and counts what differed.
type comparer struct {
	queries    map[string]int // by kind of query
	hits       map[string]int // the engine's hits, by kind of query
	mismatches map[string]int // by kind of query
	reported   int
}

// maxReported is how many mismatches a comparer describes in full; the
// rest are only counted.
const maxReported = 20

// check asks q, made of the question text, of c's two collections and
// reports where PostgreSQL's hits differ from the engine's.
func (cmp *comparer) check(t *testing.T, c pair, kind, text string, q mnemo.Query) {
	t.Helper()
	ctx := context.Background()
	want, err := c.engine.Query(ctx, q)
	if err != nil {
		t.Fatalf("engine: %s query %q: %v", kind, text, err)
	}
	got, err := c.pg.Query(ctx, q)
	if err != nil {
		t.Fatalf("postgres: %s query %q: %v", kind, text, err)
	}
	if cmp.queries == nil {
		cmp.queries, cmp.hits, cmp.mismatches = map[string]int{}, map[string]int{}, map[string]int{}
	}
	cmp.queries[kind]++
	cmp.hits[kind] += len(want)
	diff := hitsDiff(got, want)
	if diff == "" {
		return
	}
	cmp.mismatches[kind]++
	if cmp.reported++; cmp.reported <= maxReported {
		t.Errorf("%s query %q in %s: %s\n%s", kind, text, c.pg.Name(), diff, hitTable(got, want))
	}
}

func (cmp *comparer) summary(t *testing.T, asked int, d time.Duration) {
	t.Helper()
	var kinds []string
	total := 0
	for _, kind := range slices.Sorted(maps.Keys(cmp.queries)) {
		kinds = append(kinds, fmt.Sprintf("%s %d (%.1f hits each)", kind, cmp.queries[kind], float64(cmp.hits[kind])/float64(cmp.queries[kind])))
		total += cmp.queries[kind]
	}
	t.Logf("%d questions, %d queries of each backend in %v: %s", asked, total, d.Round(time.Millisecond), strings.Join(kinds, ", "))
	if len(cmp.mismatches) > 0 {
		t.Errorf("mismatches by kind of query: %v (the first %d described above)", cmp.mismatches, min(cmp.reported, maxReported))
	}
}

// hitsDiff describes the first difference between PostgreSQL's hits and
// the engine's, or returns "" when there is none: Score and TextScore
// within 1e-6 and Similarity within 1e-4 place by place, and the same IDs
// in the same order, except within a near tie. Hits whose scores are
// within 1e-6 of each other (by the engine's) are a near tie: the two
// backends compute a distance in different arithmetic (pgvector in
// float8 from float4 sums, the engine in float32 with its own summation
// order), so two records at mathematically equal distances can come out
// one or two float32 steps apart on one backend and equal on the other,
// which orders them by ID. Within a near tie the IDs must be the same set,
// in any order; the last near tie, which K may cut, may hold different
// records.
func hitsDiff(got, want []mnemo.Hit) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d hits, the engine %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		switch {
		case !within(g.Score, w.Score, 1e-6):
			return fmt.Sprintf("hit %d %q: score %v, the engine's %q %v", i, g.Record.ID, g.Score, w.Record.ID, w.Score)
		case g.Record.ID == w.Record.ID && !within(g.TextScore, w.TextScore, 1e-6):
			return fmt.Sprintf("hit %d %q: text score %v, the engine's %v", i, g.Record.ID, g.TextScore, w.TextScore)
		case g.Record.ID == w.Record.ID && !within(float64(g.Similarity), float64(w.Similarity), 1e-4):
			return fmt.Sprintf("hit %d %q: similarity %v, the engine's %v", i, g.Record.ID, g.Similarity, w.Similarity)
		}
	}
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && within(want[j].Score, want[i].Score, 1e-6) {
			j++
		}
		gs, ws := hitIDs(got[i:j]), hitIDs(want[i:j])
		slices.Sort(gs)
		slices.Sort(ws)
		switch {
		case j == len(want): // the last: a near tie may go on past K
		case j-i == 1 && gs[0] != ws[0]:
			return fmt.Sprintf("hit %d is %q, the engine's %q", i, got[i].Record.ID, want[i].Record.ID)
		case !slices.Equal(gs, ws):
			return fmt.Sprintf("hits %d to %d (a near tie) are %q, the engine's %q", i, j-1, gs, ws)
		}
		i = j
	}
	return ""
}

// within reports whether a and b differ by at most tol, relative to the
// larger magnitude above 1.
func within(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// hitTable lists both backends' hits side by side: ID, score, text score
// and similarity.
func hitTable(got, want []mnemo.Hit) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "     %-40s | %s\n", "postgres: id score text sim", "engine: id score text sim")
	for i := range max(len(got), len(want)) {
		cell := func(hs []mnemo.Hit) string {
			if i >= len(hs) {
				return ""
			}
			h := hs[i]
			return fmt.Sprintf("%s %.9f %.9f %.6f", h.Record.ID, h.Score, h.TextScore, h.Similarity)
		}
		fmt.Fprintf(&sb, "  %2d %-40s | %s\n", i, cell(got), cell(want))
	}
	return sb.String()
}
