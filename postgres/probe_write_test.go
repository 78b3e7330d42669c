package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

var oddIDs = []string{
	`it's`, `"quoted"`, `back\slash`, `ünïcødé`, `日本語`, `emoji🙂`, `a b`, `%_like`, `$1`, `);DROP TABLE x;--`,
	strings.Repeat("x", mnemo.MaxIDLength), strings.Repeat("é", mnemo.MaxIDLength/2), "tab\there", "nl\nhere", "plain",
}

func oddRecord(r *rand.Rand, id string) mnemo.Record {
	z := rand.NewZipf(r, 1.2, 1, 100)
	var ws []string
	for range r.IntN(15) {
		ws = append(ws, fmt.Sprintf("t%d", z.Uint64()))
	}
	if r.IntN(5) == 0 {
		ws = append(ws, strings.Repeat("big ", 200+r.IntN(500)))
	}
	return mnemo.Record{ID: id, Vector: []float32{1, float32(r.IntN(5))}, Content: strings.Join(ws, " ")}
}

// TestProbeConcurrentTwoStores: two Stores, several goroutines each,
// upserting and deleting overlapping odd IDs; some calls with contexts
// cancelled mid-write. The full-text tables must match the records.
func TestProbeConcurrentTwoStores(t *testing.T) {
	serverDSN(t)
	ctx := context.Background()
	dsn := freshDSN(t)
	var cols []mnemo.Collection
	for range 2 {
		_, c := openCollection(t, dsn, "odd", mnemo.CollectionConfig{Dimension: 2, Index: mnemo.HNSW})
		cols = append(cols, c)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	cancelled := 0
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 77))
			c := cols[w%2]
			for range 40 {
				cctx, cancel := context.WithCancel(ctx)
				if r.IntN(4) == 0 {
					d := time.Duration(r.IntN(3000)) * time.Microsecond
					time.AfterFunc(d, cancel)
				}
				var err error
				if r.IntN(4) == 0 {
					ids := []string{oddIDs[r.IntN(len(oddIDs))], oddIDs[r.IntN(len(oddIDs))], fmt.Sprintf("n%d", r.IntN(30))}
					_, err = c.Delete(cctx, ids...)
				} else {
					seen := map[string]bool{}
					var batch []mnemo.Record
					for range 1 + r.IntN(10) {
						id := oddIDs[r.IntN(len(oddIDs))]
						if r.IntN(2) == 0 {
							id = fmt.Sprintf("n%d", r.IntN(30))
						}
						if !seen[id] {
							seen[id] = true
							batch = append(batch, oddRecord(r, id))
						}
					}
					_, err = c.Upsert(cctx, batch...)
				}
				if err != nil {
					if errors.Is(err, context.Canceled) {
						mu.Lock()
						cancelled++
						mu.Unlock()
					} else {
						t.Errorf("writer %d: %v", w, err)
					}
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d writes cancelled", cancelled)
	conn := connect(t, dsn)
	checkTextIndex(t, conn, "odd")
	// every odd ID reads back as written
	for _, id := range oddIDs {
		if _, _, err := cols[0].Get(ctx, id); err != nil {
			t.Errorf("Get(%q): %v", id, err)
		}
	}
}

// TestProbeDropWhileBusy: DropCollection while other goroutines write and
// query: their errors must be mnemo.ErrCollectionNotFound, nothing else.
func TestProbeDropWhileBusy(t *testing.T) {
	serverDSN(t)
	ctx := context.Background()
	dsn := freshDSN(t)
	s, err := postgres.Open(ctx, dsn, &postgres.Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s2, err := postgres.Open(ctx, dsn, &postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for round := range 8 {
		cfg := mnemo.CollectionConfig{Dimension: 2, Index: []mnemo.IndexKind{mnemo.HNSW, mnemo.Flat}[round%2]}
		c, err := s.CreateCollection(ctx, "busy", cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(round), 5))
		var seed []mnemo.Record
		for i := range 200 {
			seed = append(seed, oddRecord(r, fmt.Sprintf("s%d", i)))
		}
		if _, err := c.Upsert(ctx, seed...); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		errs := map[string]int{}
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), uint64(round)))
				for {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					switch w {
					case 0:
						_, err = c.Upsert(ctx, oddRecord(r, fmt.Sprintf("s%d", r.IntN(300))), oddRecord(r, fmt.Sprintf("s%d", 300+r.IntN(300))))
					case 1:
						_, err = c.Delete(ctx, fmt.Sprintf("s%d", r.IntN(300)))
					case 2:
						_, err = c.Query(ctx, mnemo.Query{Mode: mnemo.ModeText, Text: "t1 t2 t5 big", K: 5})
					case 3:
						_, err = c.Query(ctx, mnemo.Query{Mode: mnemo.ModeHybrid, Text: "t3 big", Vector: []float32{1, 1}, K: 5})
					}
					if err != nil && !errors.Is(err, mnemo.ErrCollectionNotFound) {
						mu.Lock()
						errs[err.Error()]++
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(50+r.IntN(200)) * time.Millisecond)
		if err := s2.DropCollection(ctx, "busy"); err != nil {
			t.Errorf("round %d: DropCollection: %v", round, err)
		}
		time.Sleep(100 * time.Millisecond)
		close(stop)
		wg.Wait()
		for e, n := range errs {
			t.Errorf("round %d: %d× %s (want ErrCollectionNotFound)", round, n, e)
		}
		if t.Failed() {
			return
		}
	}
}

// TestProbeRestartDuringWrites: pg_ctl restart -m immediate while writers
// upsert and delete overlapping records: afterwards the full-text tables
// match the records, and a text query matches a recount. Needs
// MNEMO_PG_PROBE_RESTART=1 and MNEMO_PG_DIR (it restarts the server).
func TestProbeRestartDuringWrites(t *testing.T) {
	dsn := freshDSN(t)
	dir := os.Getenv("MNEMO_PG_DIR")
	if os.Getenv("MNEMO_PG_PROBE_RESTART") != "1" || dir == "" {
		t.Skip("restarts the server: set MNEMO_PG_PROBE_RESTART=1 and MNEMO_PG_DIR, and run it alone")
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, &postgres.Options{RetryTimeout: 20 * time.Second, MaxConns: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "restart", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	writes := 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if r.IntN(4) == 0 {
					_, err = c.Delete(ctx, fmt.Sprintf("n%d", r.IntN(60)), fmt.Sprintf("n%d", r.IntN(60)))
				} else {
					seen := map[string]bool{}
					var batch []mnemo.Record
					for range 1 + r.IntN(8) {
						id := fmt.Sprintf("n%d", r.IntN(60))
						if !seen[id] {
							seen[id] = true
							batch = append(batch, oddRecord(r, id))
						}
					}
					_, err = c.Upsert(ctx, batch...)
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				mu.Lock()
				writes++
				mu.Unlock()
			}
		}()
	}
	for range 3 {
		time.Sleep(400 * time.Millisecond)
		cmd := exec.Command("runuser", "-u", "postgres", "--", "/usr/lib/postgresql/15/bin/pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "log"), "restart", "-m", "immediate", "-w")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl restart: %v\n%s", err, out)
		}
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d writes", writes)
	checkTextIndex(t, connect(t, dsn), "restart")
}
