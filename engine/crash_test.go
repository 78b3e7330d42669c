package engine

import (
	"github.com/mnemodb/mnemo"

	"bufio"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/analysis"
	"github.com/mnemodb/mnemo/engine/internal/bm25"
	"github.com/mnemodb/mnemo/index"
)

// The crash test runs a writer in a child process (this test binary,
// re-executed) that commits numbered batches and prints "ack N" after each
// one returns, kills it with SIGKILL at random moments, reopens the database
// and checks that every acknowledged batch is present with its exact
// contents, that no batch is partly visible, and that the index agrees with
// the records. MNEMO_CRASH_KILLS raises the number of kills (default 20).

const (
	crashBatch = 5
	crashDim   = 8
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("MNEMO_CRASH_CHILD"); dir != "" {
		crashChild(dir)
		return
	}
	if dir := os.Getenv("MNEMO_BACKUP_CHILD"); dir != "" {
		backupChild(dir)
		return
	}
	if dir := os.Getenv("MNEMO_LOCK_CHILD"); dir != "" {
		// Report what a second process gets when it opens dir.
		db, err := Open(dir, nil)
		if err == nil {
			db.Close()
		}
		fmt.Println(errors.Is(err, ErrLocked), err)
		return
	}
	os.Exit(m.Run())
}

// crashRecord is record i of batch n, derived from n and i alone.
func crashRecord(n, i int) mnemo.Record {
	r := rand.New(rand.NewPCG(uint64(n), uint64(i)))
	v := make([]float32, crashDim)
	for j := range v {
		v[j] = r.Float32()*2 - 1
	}
	v[0] += 3 // never the zero vector
	return mnemo.Record{
		ID:       fmt.Sprintf("b%06d-%d", n, i),
		Vector:   v,
		Content:  strings.Repeat(fmt.Sprintf("batch %d record %d. ", n, i), 1+r.IntN(20)),
		Metadata: map[string]any{"batch": float64(n), "i": float64(i), "tag": fmt.Sprint("t", r.IntN(5))},
	}
}

func crashBatchRecords(n int) []mnemo.Record {
	recs := make([]mnemo.Record, crashBatch)
	for i := range recs {
		recs[i] = crashRecord(n, i)
	}
	return recs
}

// crashChild writes batches after the highest one stored, forever, with
// frequent background checkpoints so that kills also land inside them.
func crashChild(dir string) {
	db, err := Open(dir, &Options{CheckpointEvery: 9})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	c, err := db.CreateCollection(ctx, "crash", mnemo.CollectionConfig{Dimension: crashDim, M: 6, EfConstruction: 40})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	next := 0
	after := ""
	for {
		page, nx, err := c.Scan(ctx, after, 1000)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		for _, r := range page {
			n, _ := strconv.Atoi(r.ID[1:7])
			next = max(next, n+1)
		}
		if nx == "" {
			break
		}
		after = nx
	}
	out := bufio.NewWriter(os.Stdout)
	for n := next; ; n++ {
		if _, err := c.Upsert(ctx, crashBatchRecords(n)...); err != nil {
			fmt.Fprintln(out, "error", err)
			out.Flush()
			os.Exit(1)
		}
		fmt.Fprintln(out, "ack", n)
		out.Flush()
	}
}

func TestCrashKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	kills := 20
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
	acked := -1
	for k := 0; k < kills; k++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "MNEMO_CRASH_CHILD="+dir)
		stdout, _ := cmd.StdoutPipe()
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
		deadline := time.After(time.Duration(20+r.IntN(300)) * time.Millisecond)
	read:
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					break read
				}
				if n, found := strings.CutPrefix(line, "ack "); found {
					acked, _ = strconv.Atoi(n)
				} else {
					t.Fatalf("child: %s", line)
				}
			case <-deadline:
				break read
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines { // acks printed before the kill landed
			if n, found := strings.CutPrefix(line, "ack "); found {
				acked, _ = strconv.Atoi(n)
			}
		}
		cmd.Wait()
		verifyCrashDB(t, dir, acked)
	}
	t.Logf("%d kills, %d batches acknowledged", kills, acked+1)
}

// verifyCrashDB opens dir and checks the acknowledged batches 0..acked.
func verifyCrashDB(t *testing.T, dir string, acked int) {
	t.Helper()
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	c, err := db.Collection("crash")
	if errors.Is(err, mnemo.ErrCollectionNotFound) && acked < 0 {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	verifyBatches(t, c, acked)
}

// verifyBatches checks that batches 0..acked are stored exactly, that any
// later batch is stored whole or not at all, and that every stored record is
// found by an exact-width query for its own vector.
func verifyBatches(t *testing.T, c *Collection, acked int) {
	t.Helper()
	present := map[int]int{}
	after := ""
	for {
		page, next, err := c.Scan(ctx, after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range page {
			var n, i int
			fmt.Sscanf(got.ID, "b%06d-%d", &n, &i)
			if want := crashRecord(n, i); !sameRecord(got, want) {
				t.Fatalf("record %s differs from what was written", got.ID)
			}
			present[n]++
			// The index must hold the record's vector: a graph query
			// usually shows it; when it does not (the graph is
			// approximate), an exact query, which scores the index's own
			// copy of every vector, must.
			hits, err := c.Query(ctx, mnemo.Query{Vector: got.Vector, K: 1, Ef: 64})
			if err == nil && (len(hits) == 0 || hits[0].Distance > 1e-5) {
				hits, err = c.Query(ctx, mnemo.Query{Vector: got.Vector, K: 1, Exact: true})
			}
			if err != nil || len(hits) == 0 || hits[0].Distance > 1e-5 {
				t.Fatalf("record %s is not found by an exact query for its own vector: %+v, %v", got.ID, hits, err)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	if h, ok := c.idx.(*index.HNSW); ok {
		if err := h.Check(); err != nil {
			t.Fatalf("index invariants: %v", err)
		}
	}
	checkTextRebuilt(t, c, []string{"batch 3", "record 7", "batch 12 record 1", "batch"})
	for n := 0; n <= acked; n++ {
		if present[n] != crashBatch {
			t.Fatalf("acknowledged batch %d has %d of %d records", n, present[n], crashBatch)
		}
	}
	for n, cnt := range present {
		if cnt != crashBatch {
			t.Fatalf("batch %d is partly visible: %d of %d records", n, cnt, crashBatch)
		}
	}
}

// TestCrashDuringCheckpoint crashes an in-memory filesystem after each step
// of a checkpoint (keeping only what was synced) and checks that the
// database opens with every record and an index that agrees.
func TestCrashDuringCheckpoint(t *testing.T) {
	for step := 1; step <= 4; step++ {
		t.Run(fmt.Sprintf("after step %d", step), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			db := mustOpen(t, "db", &Options{FS: fs, CheckpointEvery: -1})
			c := mustCollection(t, db, "crash", mnemo.CollectionConfig{Dimension: crashDim})
			for n := 0; n < 6; n++ {
				if _, err := c.Upsert(ctx, crashBatchRecords(n)...); err != nil {
					t.Fatal(err)
				}
				if n == 2 {
					if err := c.Checkpoint(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			c.Delete(ctx, crashBatchRecords(1)[0].ID) // a delete to replay, too
			var crashed *vfs.MemFS
			checkpointHook = func(s int) error {
				if s == step {
					crashed = fs.CrashClone(vfs.CrashCloneCfg{})
					return errors.New("crash")
				}
				return nil
			}
			defer func() { checkpointHook = nil }()
			if err := c.Checkpoint(ctx); err == nil || crashed == nil {
				t.Fatalf("checkpoint did not stop at step %d: %v", step, err)
			}
			checkpointHook = nil
			db2 := mustOpen(t, "db", &Options{FS: crashed})
			defer db2.Close()
			c2, err := db2.Collection("crash")
			if err != nil {
				t.Fatal(err)
			}
			if c2.Count() != 6*crashBatch-1 {
				t.Fatalf("%d records after the crash, want %d", c2.Count(), 6*crashBatch-1)
			}
			st, _ := c2.Stats(ctx)
			t.Logf("opened by %s (%s), %d log records replayed", st.OpenedBy, st.RebuildReason, st.ReplayedRecords)
			if st.OpenedBy != "checkpoint+replay" {
				t.Fatalf("opened by %s: %s", st.OpenedBy, st.RebuildReason)
			}
			after := ""
			for {
				page, next, _ := c2.Scan(ctx, after, 100)
				for _, got := range page {
					hits, _ := c2.Query(ctx, mnemo.Query{Vector: got.Vector, K: 1})
					if len(hits) == 0 || hits[0].Record.ID != got.ID {
						t.Fatalf("record %s not found by its own vector", got.ID)
					}
				}
				if next == "" {
					break
				}
				after = next
			}
			db.Close()
		})
	}
}

// TestSecondProcessOpenFails opens a database and has another process try
// to open it too: the second must fail with ErrLocked.
func TestSecondProcessOpenFails(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	defer db.Close()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "MNEMO_LOCK_CHILD="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "true ") {
		t.Fatalf("second process: %s", out)
	}
	if runtime.GOOS == "linux" && !strings.Contains(string(out), fmt.Sprintf("open in process %d", os.Getpid())) {
		t.Fatalf("second process: %s, want the holder's pid %d named", out, os.Getpid())
	}
}

// checkTextRebuilt checks that text queries answer exactly as a full-text
// index rebuilt from the stored records does.
func checkTextRebuilt(t *testing.T, c *Collection, queries []string) {
	t.Helper()
	fresh := bm25.New()
	after := ""
	for {
		page, next, err := c.Scan(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		c.mu.RLock()
		for _, r := range page {
			fresh.Add(c.ids[r.ID], textDocOf(c.cfg, r.Content, r.Metadata))
		}
		c.mu.RUnlock()
		if next == "" {
			break
		}
		after = next
	}
	for _, q := range queries {
		hits, err := c.Query(ctx, mnemo.Query{Text: q, K: 50})
		if err != nil {
			t.Fatal(err)
		}
		// Every match, equal scores ordered by ID, as queries order them.
		res := fresh.Search(analysis.Terms(q), c.Count()+1, *c.cfg.Text.BM25, nil)
		want := make([]mnemo.Hit, len(res))
		c.mu.RLock()
		for i, r := range res {
			want[i] = mnemo.Hit{Record: mnemo.Record{ID: c.keys[r.Key]}, Score: r.Score}
		}
		c.mu.RUnlock()
		slices.SortStableFunc(want, func(a, b mnemo.Hit) int {
			if d := cmp.Compare(b.Score, a.Score); d != 0 {
				return d
			}
			return strings.Compare(a.Record.ID, b.Record.ID)
		})
		want = want[:min(len(want), 50)]
		if err := sameRanking(hits, want); err != nil {
			t.Fatalf("text query %q against an index rebuilt from the records: %v", q, err)
		}
	}
}
