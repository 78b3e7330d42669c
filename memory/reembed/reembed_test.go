package reembed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
	"github.com/mnemodb/mnemo/memory/store"
)

var ctx = context.Background()

// model stands for a neural model: the offline embedder at another
// dimension under an identity of its own (an offline identity would be
// adopted by handles of the default embedder).
type model struct{ *embed.Hashing }

func (model) Identity() string { return "test-model/128" }

// newModel is the embedder the tests move to.
func newModel(t testing.TB) embed.Embedder {
	e, err := embed.NewHashing(128)
	if err != nil {
		t.Fatal(err)
	}
	return model{e}
}

// slow delays each Embed call, so a run can be killed part way.
type slow struct {
	embed.Embedder
	d time.Duration
}

func (s slow) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	time.Sleep(s.d)
	return s.Embedder.Embed(ctx, texts)
}

func TestMain(m *testing.M) {
	if dir := os.Getenv("MNEMO_REEMBED_CHILD"); dir != "" {
		os.Exit(child(dir))
	}
	os.Exit(memtest.Main(m))
}

// child re-embeds dir's "memories" slowly; the parent kills it.
func child(dir string) int {
	db, err := engine.Open(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	e, _ := embed.NewHashing(128)
	if _, err := Collection(ctx, db.Store(), "memories", slow{model{e}, 3 * time.Millisecond}, &Options{Batch: 8}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type fact struct{ text, topic string }

func seed(t *testing.T, db mnemo.Store, n int) map[string]fact {
	t.Helper()
	s, err := store.NewSemantic(ctx, db, &store.SemanticOptions{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]fact{}
	for i := range n {
		f := fact{fmt.Sprintf("fact %d: the user visited city %d", i, i%37), fmt.Sprint("t", i%5)}
		id, err := s.Add(ctx, f.text, map[string]any{"topic": f.topic})
		if err != nil {
			t.Fatal(err)
		}
		want[id] = f
	}
	return want
}

// contents reads the collection's records as facts, checking each
// vector's dimension against its config.
func contents(t *testing.T, c mnemo.Collection) map[string]fact {
	t.Helper()
	got := map[string]fact{}
	after := ""
	for {
		page, next, err := c.Scan(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			if _, dup := got[r.ID]; dup {
				t.Fatalf("record %s twice", r.ID)
			}
			topic, _ := r.Metadata["topic"].(string)
			got[r.ID] = fact{r.Content, topic}
			if len(r.Vector) != c.Config().Dimension {
				t.Fatalf("record %s has %d values in a %d-dimension collection", r.ID, len(r.Vector), c.Config().Dimension)
			}
		}
		if next == "" {
			return got
		}
		after = next
	}
}

func sameFacts(t *testing.T, got, want map[string]fact, when string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", when, len(got), len(want))
	}
	for id, f := range want {
		if got[id] != f {
			t.Fatalf("%s: record %s = %+v, want %+v", when, id, got[id], f)
		}
	}
}

// TestReembed moves a fact memory to a new embedder and checks that
// every fact is kept, searchable through the new embedder, and that a
// handle of the old one fails with ErrMismatch.
func TestReembed(t *testing.T) {
	db := memtest.Store(t)
	want := seed(t, db, 300)
	old, err := store.NewSemantic(ctx, db, &store.SemanticOptions{SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var last Progress
	res, err := Collection(ctx, db, "memories", newModel(t), &Options{Batch: 50, Progress: func(p Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 300 || res.Embedded != 300 || res.Done || !last.Final || last.Scanned != 300 {
		t.Fatalf("Result %+v, last progress %+v", res, last)
	}
	c, _ := db.Collection(ctx, "memories")
	if c.Config().Embedder != newModel(t).Identity() {
		t.Fatalf("embedder %q after the switch", c.Config().Embedder)
	}
	sameFacts(t, contents(t, c), want, "after the switch")
	if _, err := db.Collection(ctx, "memories"+StagingSuffix); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("the staging collection is left: %v", err)
	}
	if _, err := old.Search(ctx, "city 3", 3); !errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("a handle of the old embedder: %v, want ErrMismatch", err)
	}
	fresh, err := store.NewSemantic(ctx, db, &store.SemanticOptions{Embedder: newModel(t), SweepEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if got, err := fresh.Search(ctx, "fact 42", 1); err != nil || len(got) != 1 || got[0] != want[idOf(want, "fact 42:")].text {
		t.Fatalf("search through the new embedder: %q, %v", got, err)
	}
	again, err := Collection(ctx, db, "memories", newModel(t), nil)
	if err != nil || !again.Done || again.Records != 300 {
		t.Fatalf("a second run: %+v, %v", again, err)
	}
}

func idOf(m map[string]fact, prefix string) string {
	for id, f := range m {
		if len(f.text) >= len(prefix) && f.text[:len(prefix)] == prefix {
			return id
		}
	}
	return ""
}

// TestReembedWhileWriting re-embeds while a writer adds, changes and
// deletes facts: every write acknowledged before the switch is in the new
// collection, and none that was not.
func TestReembedWhileWriting(t *testing.T) {
	db := memtest.Store(t)
	want := seed(t, db, 200)
	c, _ := db.Collection(ctx, "memories")
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(5, 6))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := fmt.Sprintf("w%05d", rng.IntN(300))
			mu.Lock()
			if rng.IntN(3) == 0 {
				if _, err := c.Delete(ctx, id); err == nil {
					delete(want, id)
				}
			} else {
				f := fact{fmt.Sprintf("written %d while re-embedding", i), "w"}
				e, _ := embed.NewHashing(0)
				v, _ := e.Embed(ctx, []string{f.text})
				if _, err := c.Upsert(ctx, mnemo.Record{ID: id, Vector: v[0], Content: f.text, Metadata: map[string]any{"topic": "w"}}); err == nil {
					want[id] = f
				} else if !errors.Is(err, mnemo.ErrCollectionNotFound) {
					t.Errorf("write: %v", err)
				}
			}
			mu.Unlock()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	_, err := Collection(ctx, db, "memories", slow{newModel(t), time.Millisecond}, &Options{Batch: 16})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := db.Collection(ctx, "memories")
	sameFacts(t, contents(t, nc), want, "after re-embedding under writes")
}

// TestReembedKilled kills a re-embedding process at random points (kill
// -9) and runs it again until it finishes: at every point the collection
// holds every fact once, made wholly by the old embedder or wholly by the
// new one, and it switches exactly once.
func TestReembedKilled(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := seed(t, db.Store(), 400)
	oldID := func() string { c, _ := db.Store().Collection(ctx, "memories"); return c.Config().Embedder }()
	db.Close()
	newID := newModel(t).Identity()
	rng := rand.New(rand.NewPCG(7, 8))
	switched, kills := 0, 0
	// Killed at random points for some rounds, then left to finish (on
	// a slow machine, or under the race detector, no run may finish
	// inside its random time).
	const killRounds = 12
	for round := 0; round <= killRounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MNEMO_REEMBED_CHILD="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAt := time.Duration(rng.IntN(400)) * time.Millisecond
		if round == killRounds {
			killAt = time.Hour
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var werr error
		killed := false
		select {
		case werr = <-exited:
		case <-time.After(killAt):
			cmd.Process.Signal(syscall.SIGKILL)
			werr = <-exited
			kills++
			killed = true
		}
		if werr != nil && !killed {
			t.Fatalf("round %d: the child failed: %v", round, werr)
		}
		db, err := engine.Open(dir, nil)
		if err != nil {
			t.Fatalf("round %d: open after the kill: %v", round, err)
		}
		c, err := db.Store().Collection(ctx, "memories")
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		emb := c.Config().Embedder
		if emb != oldID && emb != newID {
			t.Fatalf("round %d: embedder %q", round, emb)
		}
		sameFacts(t, contents(t, c), want, fmt.Sprintf("round %d (%s)", round, emb))
		_, stagingErr := db.Store().Collection(ctx, "memories"+StagingSuffix)
		db.Close()
		if emb == newID {
			switched++
			if !errors.Is(stagingErr, mnemo.ErrCollectionNotFound) {
				t.Fatalf("round %d: switched, and the staging collection is still there: %v", round, stagingErr)
			}
			break
		}
	}
	if switched != 1 {
		t.Fatalf("switched %d times in the rounds, want once", switched)
	}
	t.Logf("%d kills before the switch", kills)
}

// plain hides the engine's Replacer.
type plain struct{ mnemo.Store }

// TestReembedNeedsReplacer checks that a store that cannot switch
// collections atomically is refused before anything is embedded.
func TestReembedNeedsReplacer(t *testing.T) {
	db := memtest.Store(t)
	seed(t, db, 3)
	calls := 0
	counting := countingEmbedder{newModel(t), &calls}
	if _, err := Collection(ctx, plain{db}, "memories", counting, nil); !errors.Is(err, mnemo.ErrNoReplace) || calls != 0 {
		t.Fatalf("Collection on a store without Replacer: %v after %d Embed calls", err, calls)
	}
	if _, err := db.Collection(ctx, "memories"+StagingSuffix); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("a staging collection was made: %v", err)
	}
	if _, err := Collection(ctx, db, "nothing", newModel(t), nil); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("an absent collection: %v", err)
	}
}

type countingEmbedder struct {
	embed.Embedder
	n *int
}

func (c countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	*c.n++
	return c.Embedder.Embed(ctx, texts)
}

// TestReembedLeavesOtherCollections: a collection of another kind under
// the staging name is refused, never dropped, with or without work to do.
func TestReembedLeavesOtherCollections(t *testing.T) {
	db := memtest.Store(t)
	seed(t, db, 5)
	uc, err := db.CreateCollection(ctx, "memories"+StagingSuffix, mnemo.CollectionConfig{Dimension: 3, Kind: "user.stuff"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uc.Upsert(ctx, mnemo.Record{ID: "precious", Vector: []float32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Collection(ctx, db, "memories", newModel(t), nil); !errors.Is(err, ErrNotStaging) {
		t.Fatalf("re-embedding beside another collection of the staging name: %v, want ErrNotStaging", err)
	}
	c, err := db.Collection(ctx, "memories"+StagingSuffix)
	if err != nil {
		t.Fatalf("the user's collection is gone: %v", err)
	}
	if _, ok, _ := c.Get(ctx, "precious"); !ok {
		t.Fatal("the user's record is gone")
	}
	old, _ := db.Collection(ctx, "memories")
	e, _ := embed.NewHashing(0)
	if old.Config().Embedder != e.Identity() {
		t.Fatalf("the memory was switched: %q", old.Config().Embedder)
	}
	// Nothing to do: the other collection stays too.
	if res, err := Collection(ctx, db, "memories", e, nil); err != nil || !res.Done {
		t.Fatalf("nothing to do: %+v, %v", res, err)
	}
	if _, err := db.Collection(ctx, "memories"+StagingSuffix); err != nil {
		t.Fatalf("a run with nothing to do dropped the user's collection: %v", err)
	}
}
