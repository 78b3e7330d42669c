package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

func TestUnsupportedText(t *testing.T) {
	s := openFresh(t)
	defer s.Close()
	ctx := context.Background()
	c, err := s.CreateCollection(ctx, "nul", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []mnemo.Record{
		{ID: "c", Vector: []float32{1, 0}, Content: "a\x00b"},
		{ID: "m", Vector: []float32{1, 0}, Metadata: map[string]any{"k": "a\x00b"}},
		{ID: "k", Vector: []float32{1, 0}, Metadata: map[string]any{"a\x00": 1}},
	} {
		_, err := c.Upsert(ctx, r)
		if !errors.Is(err, mnemo.ErrInvalidRecord) || !errors.Is(err, postgres.ErrUnsupported) {
			t.Errorf("Upsert(%q): %v, want ErrInvalidRecord and ErrUnsupported", r.ID, err)
		}
	}
	// A record without an ID is named by its place in the batch, not by
	// an ID the caller never saw.
	_, err = c.Upsert(ctx, mnemo.Record{ID: "fine", Vector: []float32{1, 0}}, mnemo.Record{Vector: []float32{1, 0}, Content: "a\x00b"})
	if !errors.Is(err, postgres.ErrUnsupported) || !strings.Contains(err.Error(), "record 1 of the batch") {
		t.Errorf("Upsert of a record without an ID holding U+0000: %v, want ErrUnsupported naming record 1 of the batch", err)
	}
	// An escaped backslash before "u0000" is not a NUL.
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "ok", Vector: []float32{1, 0}, Content: `\u0000`, Metadata: map[string]any{"k": `\u0000`}}); err != nil {
		t.Fatalf("a literal backslash-u0000: %v", err)
	}
	for _, cfg := range []mnemo.CollectionConfig{
		{Dimension: 2001}, {Dimension: 16001, Index: mnemo.Flat},
		{Dimension: 2, Embedder: "a\x00b"}, {Dimension: 2, Kind: "a\x00b"}, {Dimension: 2, Text: mnemo.TextConfig{Fields: []string{"a\x00b"}}},
	} {
		if _, err := s.CreateCollection(ctx, "big", cfg); !errors.Is(err, mnemo.ErrInvalidConfig) || !errors.Is(err, postgres.ErrUnsupported) {
			t.Errorf("CreateCollection(%+v): %v, want ErrInvalidConfig and ErrUnsupported", cfg, err)
		}
	}
	flat, err := s.CreateCollection(ctx, "flat", mnemo.CollectionConfig{Dimension: 3000, Index: mnemo.Flat})
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, 3000)
	v[0] = 1
	if _, err := flat.Upsert(ctx, mnemo.Record{ID: "a", Vector: v}); err != nil {
		t.Fatal(err)
	}
	if hits, err := flat.Query(ctx, mnemo.Query{Vector: v}); err != nil || len(hits) != 1 {
		t.Fatalf("flat query: %v, %v", hits, err)
	}
}

func TestSchemaVersion(t *testing.T) {
	dsn := freshDSN(t)
	ctx := context.Background()
	for range 2 { // the second Open finds the schema made
		createSchema(t, dsn)
	}
	conn := connect(t, dsn)
	if _, err := conn.Exec(ctx, `UPDATE mnemo_schema SET version = $1`, postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(ctx, dsn, nil); !errors.Is(err, postgres.ErrSchema) {
		t.Fatalf("Open of a newer schema: %v, want ErrSchema", err)
	}
	if _, err := postgres.Open(ctx, "postgres://%zz", nil); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Fatalf("Open of a malformed DSN: %v, want ErrInvalidConfig", err)
	}
	if _, err := postgres.Open(ctx, dsn, &postgres.Options{MaxConns: -1}); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Fatalf("Open with MaxConns -1: %v, want ErrInvalidConfig", err)
	}
}

func TestClosed(t *testing.T) {
	s := openFresh(t)
	ctx := context.Background()
	c, err := s.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 0}}); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("Upsert after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Collections(ctx); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("Collections after Close: %v, want ErrClosed", err)
	}
}

// TestNilStore: a nil *Store passed as a mnemo.Store (a non-nil interface)
// fails every call with ErrClosed instead of panicking, through the memory
// adapters too. It needs no server.
func TestNilStore(t *testing.T) {
	ctx := context.Background()
	var s *postgres.Store
	var db mnemo.Store = s
	if _, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2}); !errors.Is(err, mnemo.ErrClosed) {
		t.Errorf("CreateCollection: %v, want ErrClosed", err)
	}
	if _, err := db.Collection(ctx, "c"); !errors.Is(err, mnemo.ErrClosed) {
		t.Errorf("Collection: %v, want ErrClosed", err)
	}
	if _, err := db.Collections(ctx); !errors.Is(err, mnemo.ErrClosed) {
		t.Errorf("Collections: %v, want ErrClosed", err)
	}
	if err := db.DropCollection(ctx, "c"); !errors.Is(err, mnemo.ErrClosed) {
		t.Errorf("DropCollection: %v, want ErrClosed", err)
	}
	if _, err := mnemo.TryLock(ctx, db, "x"); !errors.Is(err, mnemo.ErrClosed) {
		t.Errorf("TryLock: %v, want ErrClosed", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// The second process of TestTwoProcesses: it writes numbered records in
// batches and prints "acked N" after each batch that Upsert acknowledged.
func TestMain(m *testing.M) {
	if dsn := os.Getenv("MNEMO_PG_WRITER_DSN"); dsn != "" {
		n, _ := strconv.Atoi(os.Getenv("MNEMO_PG_WRITER_N"))
		if err := writer(dsn, n); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writer(dsn string, n int) error {
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "shared", mnemo.CollectionConfig{Dimension: 4})
	if err != nil {
		return err
	}
	for i := 0; i < n; i += 5 {
		var batch []mnemo.Record
		for j := i; j < i+5; j++ {
			batch = append(batch, sharedRecord(j))
		}
		if _, err := c.Upsert(ctx, batch...); err != nil {
			return err
		}
		fmt.Printf("acked %d\n", i+4)
	}
	return nil
}

func sharedRecord(i int) mnemo.Record {
	return mnemo.Record{
		ID:       fmt.Sprintf("rec-%05d", i),
		Vector:   []float32{1, float32(i % 7), float32(i % 11), float32(i)},
		Content:  fmt.Sprintf("memory number w%dw", i),
		Metadata: map[string]any{"n": float64(i)},
	}
}

// TestTwoProcesses shares one PostgreSQL memory between two processes:
// another process (this test binary again) writes while this one reads
// and searches, and every write the other acknowledged is visible here
// as soon as it says so.
func TestTwoProcesses(t *testing.T) {
	dsn := freshDSN(t)
	const n = 200
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "MNEMO_PG_WRITER_DSN="+dsn, "MNEMO_PG_WRITER_N="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checked := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		last, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "acked "))
		if err != nil {
			t.Fatalf("writer said %q", sc.Text())
		}
		c, err := s.Collection(ctx, "shared")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Count(ctx); err != nil || got < last+1 {
			t.Fatalf("after ack of %d: Count %d, %v", last, got, err)
		}
		for i := checked; i <= last; i++ {
			want := sharedRecord(i)
			rec, ok, err := c.Get(ctx, want.ID)
			if err != nil || !ok || rec.Content != want.Content {
				t.Fatalf("record %d acknowledged by the writer: Get = %v, %v", i, ok, err)
			}
			f, _ := mnemo.NewFilter(map[string]any{"n": i})
			hits, err := c.Query(ctx, mnemo.Query{Vector: want.Vector, Text: fmt.Sprintf("w%dw", i), K: 1, Filter: f})
			if err != nil || len(hits) != 1 || hits[0].Record.ID != want.ID || hits[0].VectorRank != 1 || hits[0].TextRank != 1 {
				t.Fatalf("record %d: hybrid search = %+v, %v", i, hits, err)
			}
		}
		checked = last + 1
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("writer: %v", err)
	}
	if checked != n {
		t.Fatalf("checked %d records, the writer wrote %d", checked, n)
	}
}

// TestOutage stops the server with pg_ctl stop -m immediate (a crash: no
// checkpoint, no clean shutdown) while a writer goes on, and starts it
// again: every acknowledged write is there, the writes during the outage
// failed with ErrUnavailable, and the same Store works again. It stops
// the shared test server, so it runs only when MNEMO_PG_OUTAGE=1 (.ci/run
// runs it alone) with MNEMO_PG_DIR set by the server's start script.
func TestOutage(t *testing.T) {
	dsn := freshDSN(t)
	dir := os.Getenv("MNEMO_PG_DIR")
	if os.Getenv("MNEMO_PG_OUTAGE") != "1" || dir == "" {
		t.Skip("stops the server: set MNEMO_PG_OUTAGE=1 and MNEMO_PG_DIR, and run it alone")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	pgctl := func(args ...string) {
		t.Helper()
		cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", "/usr/lib/postgresql/15/bin/pg_ctl", "-D", filepath.Join(dir, "data")}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pg_ctl %v: %v\n%s", args, err, out)
		}
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, &postgres.Options{RetryTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "outage", mnemo.CollectionConfig{Dimension: 4})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var acked []int
	failed := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, err := c.Upsert(ctx, sharedRecord(i))
			mu.Lock()
			if err == nil {
				acked = append(acked, i)
			} else {
				if !errors.Is(err, postgres.ErrUnavailable) {
					t.Errorf("write %d during the outage: %v, want ErrUnavailable", i, err)
				}
				failed++
			}
			mu.Unlock()
		}
	}()
	waitFor := func(cond func() bool) {
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("timed out waiting for the writer")
			}
		}
	}
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 50 })
	pgctl("-m", "immediate", "-w", "stop")
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return failed >= 2 })
	if _, err := c.Count(ctx); !errors.Is(err, postgres.ErrUnavailable) {
		t.Errorf("Count during the outage: %v, want ErrUnavailable", err)
	}
	opts := fmt.Sprintf("-p %s -k %s -c listen_addresses=127.0.0.1 -c fsync=on", u.Port(), dir)
	pgctl("-l", filepath.Join(dir, "log"), "-w", "-o", opts, "start")
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	waitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= before+50 })
	close(stop)
	<-done
	t.Logf("%d writes acknowledged, %d failed during the outage", len(acked), failed)
	for _, i := range acked {
		want := sharedRecord(i)
		rec, ok, err := c.Get(ctx, want.ID)
		if err != nil || !ok || rec.Content != want.Content {
			t.Fatalf("acknowledged write %d: Get = %v, %v", i, ok, err)
		}
	}
}

// TestVectorTiesPastReach: when more records tie at the K-th place than
// the index is asked for past K, the tie is settled by an exact scan: the
// smallest IDs, as the engine keeps them; when fewer tie, by the index
// alone, with the same result.
func TestVectorTiesPastReach(t *testing.T) {
	ctx := context.Background()
	pg := openFresh(t)
	defer pg.Close()
	c, err := pg.CreateCollection(ctx, "ties", mnemo.CollectionConfig{Dimension: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tied := range []int{20, 200} {
		var recs []mnemo.Record
		for i := range tied {
			recs = append(recs, mnemo.Record{ID: fmt.Sprintf("t%d-%04d", tied, (i*7919)%tied), Vector: []float32{1, 1, 0}})
		}
		for i := range 30 {
			recs = append(recs, mnemo.Record{ID: fmt.Sprintf("o%d-%02d", tied, i), Vector: []float32{1, float32(i) + 2, 5}})
		}
		if _, err := c.Upsert(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		hits, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 1, 0}, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"t20-0000", "t20-0001", "t20-0002", "t20-0003", "t20-0004"}
		if got := hitIDs(hits); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d tied: got %v, want %v", tied, got, want)
		}
	}
}

func hitIDs(hits []mnemo.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Record.ID
	}
	return out
}

// TestVectorTiesInFloat32: two records whose float32 distances to the
// query are equal come back in ID order, also when pgvector's float8
// distances differ in their last bits (it sums in float4 in its own
// order): a tie is what the hits carry, as on the engine. The two records
// permute one vector's components, so that pgvector sums their norms in
// different orders.
func TestVectorTiesInFloat32(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	// Ask the server for a pair: permutations v, w of random vectors
	// whose float8 distances to q differ and float4 ones do not.
	q := []float32{1, 0, 0}
	r := rand.New(rand.NewPCG(5, 6))
	text := func(v []float32) string { return fmt.Sprintf("[%v,%v,%v]", v[0], v[1], v[2]) }
	var vs, ws []string
	var cand [][2][]float32
	for range 5000 {
		v := []float32{r.Float32() + 0.1, r.Float32() + 0.1, r.Float32() + 0.1}
		w := []float32{v[0], v[2], v[1]}
		vs, ws = append(vs, text(v)), append(ws, text(w))
		cand = append(cand, [2][]float32{v, w})
	}
	var i int
	var dv, dw float64
	err := connect(t, dsn).QueryRow(ctx, `SELECT x.i - 1, '[1,0,0]'::vector <=> x.v::vector, '[1,0,0]'::vector <=> x.w::vector
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(v, w, i)
		WHERE ('[1,0,0]'::vector <=> x.v::vector) <> ('[1,0,0]'::vector <=> x.w::vector)
		AND ('[1,0,0]'::vector <=> x.v::vector)::float4 = ('[1,0,0]'::vector <=> x.w::vector)::float4
		LIMIT 1`, vs, ws).Scan(&i, &dv, &dw)
	if err != nil {
		t.Fatalf("no vectors whose float8 distances differ and float4 ones do not: %v", err)
	}
	near, far := cand[i][0], cand[i][1]
	if dv > dw {
		near, far = far, near
	}
	pg, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, index := range []mnemo.IndexKind{mnemo.HNSW, mnemo.Flat} {
		c, err := pg.CreateCollection(ctx, "f32-"+string(index), mnemo.CollectionConfig{Dimension: 3, Index: index})
		if err != nil {
			t.Fatal(err)
		}
		// "a", the smaller ID, has the larger float8 distance.
		if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: far}, mnemo.Record{ID: "b", Vector: near}, mnemo.Record{ID: "c", Vector: []float32{0, 1, 1}}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{1, 2, 3} {
			hits, err := c.Query(ctx, mnemo.Query{Vector: q, K: k})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"a", "b", "c"}[:k]
			if got := hitIDs(hits); !slices.Equal(got, want) {
				t.Errorf("%s, K %d: got %v, want %v (a and b at float32 distance %v)", index, k, got, want, hits[0].Distance)
			}
		}
	}
}
