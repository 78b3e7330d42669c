package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/postgres"
)

// readOnlyDSN returns dsn with connections whose transactions are all
// read-only, as on a hot standby (pgx passes the parameter to the server).
func readOnlyDSN(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	ro := u.String()
	conn, err := pgx.Connect(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var on string
	if err := conn.QueryRow(context.Background(), `SHOW transaction_read_only`).Scan(&on); err != nil || on != "on" {
		t.Fatalf("transaction_read_only through %s: %q, %v; want on", ro, on, err)
	}
	return ro
}

// replicas are the read-only servers the replica tests run on: the test
// server through read-only sessions, and a hot standby of it. dsn gives
// the DSN of a primary's schema (a freshDSN) on the read-only server;
// sync waits until that server shows what the primary wrote.
var replicas = []struct {
	name string
	dsn  func(t *testing.T, dsn string) string
	sync func(t *testing.T)
}{
	{"read-only sessions", readOnlyDSN, func(*testing.T) {}},
	{"hot standby", onStandby, func(t *testing.T) { waitReplay(t) }},
}

// TestReadReplica: a Store opened on a read-only server whose schema the
// primary created reads as the primary does; its writes fail with
// ErrReadOnly and change nothing; its locks work.
func TestReadReplica(t *testing.T) {
	for _, r := range replicas {
		t.Run(r.name, func(t *testing.T) { testReadReplica(t, r.dsn, r.sync) })
	}
}

func testReadReplica(t *testing.T, replicaDSN func(*testing.T, string) string, sync func(*testing.T)) {
	ctx := context.Background()
	dsn := freshDSN(t)
	rdsn := replicaDSN(t, dsn)
	primary, pc := openCollection(t, dsn, "notes", mnemo.CollectionConfig{Dimension: 2})
	if _, err := pc.Upsert(ctx,
		mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "Paul works at Google"},
		mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "Anna lives in Oslo"},
	); err != nil {
		t.Fatal(err)
	}
	sync(t)

	replica, err := postgres.Open(ctx, rdsn, nil)
	if err != nil {
		t.Fatalf("Open of a read-only server with a current schema: %v", err)
	}
	defer replica.Close()
	if names, err := replica.Collections(ctx); err != nil || !slices.Equal(names, []string{"notes"}) {
		t.Fatalf("Collections: %v, %v; want [notes]", names, err)
	}
	c, err := replica.Collection(ctx, "notes")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok, err := c.Get(ctx, "a"); err != nil || !ok || r.Content != "Paul works at Google" {
		t.Fatalf("Get: %+v, %v, %v", r, ok, err)
	}
	if recs, _, err := c.Scan(ctx, "", 10); err != nil || len(recs) != 2 {
		t.Fatalf("Scan: %d records, %v; want 2", len(recs), err)
	}
	if n, err := c.Count(ctx); err != nil || n != 2 {
		t.Fatalf("Count: %d, %v; want 2", n, err)
	}
	if hits, err := c.Query(ctx, mnemo.Query{Vector: []float32{1, 0.1}, Text: "where does Paul work", K: 1}); err != nil || len(hits) != 1 || hits[0].Record.ID != "a" {
		t.Fatalf("Query: %+v, %v; want a", hits, err)
	}

	writes := []struct {
		name string
		f    func() error
	}{
		{"Upsert", func() error {
			_, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{0, 1}, Content: "changed"})
			return err
		}},
		{"Delete", func() error { _, err := c.Delete(ctx, "a", "b"); return err }},
		{"CreateCollection", func() error {
			_, err := replica.CreateCollection(ctx, "other", mnemo.CollectionConfig{Dimension: 2})
			return err
		}},
		{"DropCollection", func() error { return replica.DropCollection(ctx, "notes") }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := w.f(); !errors.Is(err, postgres.ErrReadOnly) {
				t.Fatalf("%s on a read-only server: %v, want ErrReadOnly", w.name, err)
			}
		})
	}

	// Nothing changed, as the primary sees it, and then the replica.
	for _, s := range []*postgres.Store{primary, replica} {
		if names, err := s.Collections(ctx); err != nil || !slices.Equal(names, []string{"notes"}) {
			t.Fatalf("Collections after the refused writes: %v, %v; want [notes]", names, err)
		}
		c, err := s.Collection(ctx, "notes")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := c.Count(ctx); err != nil || n != 2 {
			t.Fatalf("Count after the refused writes: %d, %v; want 2", n, err)
		}
		if r, ok, err := c.Get(ctx, "a"); err != nil || !ok || r.Content != "Paul works at Google" {
			t.Fatalf("Get after the refused writes: %+v, %v, %v", r, ok, err)
		}
		sync(t)
	}

	// Advisory locks are not writes: a standby takes them (for itself).
	l, err := replica.TryLock(ctx, "session")
	if err != nil {
		t.Fatalf("TryLock on a read-only server: %v", err)
	}
	l.Unlock()
}

// TestReadOnlyOpen: Open of a read-only server reads the schema and
// changes nothing: a current schema opens, a missing one is ErrReadOnly
// naming the primary, a newer one ErrSchema as on the primary.
func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup []string // run after the primary created the schema; nil: an empty database
		want  error
		after string // mnemo_schema's rows after Open (see schemaRows)
	}{
		{"no schema", nil, postgres.ErrReadOnly, "absent"},
		{"current version", []string{}, nil, fmt.Sprint([]int{postgres.SchemaVersion})},
		{"newer version", []string{fmt.Sprintf(`UPDATE mnemo_schema SET version = %d`, postgres.SchemaVersion+1)}, postgres.ErrSchema, fmt.Sprint([]int{postgres.SchemaVersion + 1})},
		{"no version row", []string{`DELETE FROM mnemo_schema`}, postgres.ErrSchema, "[]"},
	}
	for _, r := range replicas {
		for _, tt := range tests {
			t.Run(r.name+"/"+tt.name, func(t *testing.T) {
				dsn := freshDSN(t)
				conn := setupSchema(t, dsn, tt.setup)
				rdsn := r.dsn(t, dsn)
				r.sync(t)
				s, err := postgres.Open(ctx, rdsn, nil)
				switch {
				case tt.want == nil && err != nil:
					t.Fatalf("Open: %v", err)
				case tt.want == nil:
					s.Close()
				case !errors.Is(err, tt.want):
					t.Fatalf("Open: %v, want %v", err, tt.want)
				case tt.want == postgres.ErrReadOnly && !strings.Contains(err.Error(), "primary"):
					t.Errorf("Open: %v, want it to name the primary", err)
				}
				if got := schemaRows(t, conn); got != tt.after {
					t.Errorf("mnemo_schema holds %v after Open, want %v", got, tt.after)
				}
			})
		}
	}
}

// TestReadDSN: a Store opened with ReadDSN on a hot standby writes to the
// primary and reads from the standby. While the standby's replay is
// paused, writes through the Store succeed (the standby would refuse
// them) and its reads do not see them (the primary would show them);
// once the replay resumes they do. Close closes the standby's
// connections too.
func TestReadDSN(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	app := appName("readdsn")
	rdsn := withParam(t, onStandby(t, dsn), "application_name", app)
	// This Open makes the schema on the primary, and waits for the
	// standby to replay it.
	s, err := postgres.Open(ctx, dsn, &postgres.Options{ReadDSN: rdsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := mnemo.Record{ID: "a", Vector: []float32{1, 0}, Content: "Paul works at Google"}
	b := mnemo.Record{ID: "b", Vector: []float32{0, 1}, Content: "Anna lives in Oslo"}
	if _, err := c.Upsert(ctx, a); err != nil {
		t.Fatal(err)
	}
	waitReplay(t)
	if _, ok, err := c.Get(ctx, "a"); err != nil || !ok {
		t.Fatalf("Get of a replayed write: %v, %v", ok, err)
	}

	resume := pauseReplay(t)
	if _, err := c.Upsert(ctx, b); err != nil {
		t.Fatalf("Upsert with the standby paused: %v", err)
	}
	if _, err := s.CreateCollection(ctx, "later", mnemo.CollectionConfig{Dimension: 2}); err != nil {
		t.Fatalf("CreateCollection with the standby paused: %v", err)
	}
	primary, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	if names, err := primary.Collections(ctx); err != nil || !slices.Equal(names, []string{"later", "notes"}) {
		t.Fatalf("Collections on the primary: %v, %v; want [later notes]", names, err)
	}
	// The Store's reads see the standby: the writes since the pause only
	// once it has replayed them.
	reads := func(replayed bool) {
		t.Helper()
		names, n := []string{"notes"}, 1
		if replayed {
			names, n = []string{"later", "notes"}, 2
		}
		if got, err := s.Collections(ctx); err != nil || !slices.Equal(got, names) {
			t.Errorf("Collections: %v, %v; want %v", got, err, names)
		}
		if _, err := s.Collection(ctx, "later"); replayed && err != nil || !replayed && !errors.Is(err, mnemo.ErrCollectionNotFound) {
			t.Errorf("Collection(later): %v, want found %v", err, replayed)
		}
		if _, ok, err := c.Get(ctx, "b"); err != nil || ok != replayed {
			t.Errorf("Get(b): %v, %v; want %v", ok, err, replayed)
		}
		if got, err := c.Count(ctx); err != nil || got != n {
			t.Errorf("Count: %d, %v; want %d", got, err, n)
		}
		if recs, _, err := c.Scan(ctx, "", 10); err != nil || len(recs) != n {
			t.Errorf("Scan: %d records, %v; want %d", len(recs), err, n)
		}
		for _, q := range []mnemo.Query{
			{Vector: []float32{1, 1}, K: 5},
			{Text: "Paul works, Anna lives", K: 5},
			{Vector: []float32{1, 1}, Text: "Paul works, Anna lives", K: 5, Spread: &mnemo.Spread{Position: "p", Weight: 0.5}},
		} {
			if hits, err := c.Query(ctx, q); err != nil || len(hits) != n {
				t.Errorf("Query(vector %v, text %q): %d hits, %v; want %d", q.Vector != nil, q.Text, len(hits), err, n)
			}
		}
	}
	reads(false)
	resume()
	waitReplay(t)
	reads(true)

	standby := connect(t, standbyDSN(t))
	if n := backends(t, standby, app); n == 0 {
		t.Fatalf("no connection of the Store's on the standby")
	}
	s.Close()
	for deadline := time.Now().Add(5 * time.Second); backends(t, standby, app) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections of the Store's on the standby 5 s after Close", backends(t, standby, app))
		}
	}
}

// TestReadDSNSchema: Open reads the schema on the read server and never
// changes it there, even on a writable server: a missing schema is
// ErrReadOnly once RetryTimeout has passed, a newer one ErrSchema, an
// unreachable server ErrUnavailable. The read server here is another
// schema on the test server.
func TestReadDSNSchema(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup []string // run on the read schema after Open made it; nil: no schema
		want  error
		after string // the read schema's mnemo_schema rows after Open
	}{
		{"no schema", nil, postgres.ErrReadOnly, "absent"},
		{"newer version", []string{fmt.Sprintf(`UPDATE mnemo_schema SET version = %d`, postgres.SchemaVersion+1)}, postgres.ErrSchema, fmt.Sprint([]int{postgres.SchemaVersion + 1})},
		{"current version", []string{}, nil, fmt.Sprint([]int{postgres.SchemaVersion})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn, rdsn := freshDSN(t), freshDSN(t)
			conn := setupSchema(t, rdsn, tt.setup)
			s, err := postgres.Open(ctx, dsn, &postgres.Options{ReadDSN: rdsn, RetryTimeout: 100 * time.Millisecond})
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("Open: %v", err)
			case tt.want == nil:
				s.Close()
			case !errors.Is(err, tt.want):
				t.Fatalf("Open: %v, want %v", err, tt.want)
			}
			if got := schemaRows(t, conn); got != tt.after {
				t.Errorf("the read server's mnemo_schema holds %v after Open, want %v", got, tt.after)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		_, err := postgres.Open(ctx, freshDSN(t), &postgres.Options{ReadDSN: "postgres://127.0.0.1:1/mnemo?connect_timeout=1", RetryTimeout: 100 * time.Millisecond})
		if !errors.Is(err, postgres.ErrUnavailable) {
			t.Fatalf("Open with an unreachable read server: %v, want ErrUnavailable", err)
		}
	})
}

// TestReadDSNInvalid: a ReadDSN that does not parse is
// mnemo.ErrInvalidConfig, reported with the other problems, before Open
// connects anywhere, and without the password it holds. It needs no
// server.
func TestReadDSNInvalid(t *testing.T) {
	bad := "postgres://mnemo:s3cret@127.0.0.1:notaport/mnemo"
	opts := &postgres.Options{MaxConns: -1, ReadDSN: bad}
	err := opts.Validate()
	if !errors.Is(err, mnemo.ErrInvalidConfig) || !strings.Contains(err.Error(), "MaxConns") || !strings.Contains(err.Error(), "ReadDSN") {
		t.Fatalf("Validate: %v, want ErrInvalidConfig naming MaxConns and ReadDSN", err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Validate: %v names the password", err)
	}
	// The primary's address is never dialled: a closed port would be
	// ErrUnavailable.
	_, err = postgres.Open(context.Background(), "postgres://127.0.0.1:1/mnemo", &postgres.Options{ReadDSN: bad})
	if !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Fatalf("Open with a ReadDSN that does not parse: %v, want ErrInvalidConfig", err)
	}
}

// TestOpenCurrentTakesNoLock: Open of a current schema does not wait for
// the schema lock, which CreateCollection holds while it builds indexes.
func TestOpenCurrentTakesNoLock(t *testing.T) {
	ctx := context.Background()
	dsn := freshDSN(t)
	createSchema(t, dsn)
	conn := connect(t, dsn)
	const schemaLock = 0x6d6e656d6f // the package's schema lock key ("mnemo")
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(schemaLock)); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, int64(schemaLock))
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s, err := postgres.Open(tctx, dsn, nil)
	if err != nil {
		t.Fatalf("Open of a current schema while the schema lock is held: %v", err)
	}
	s.Close()
}

// TestConcurrentFirstOpen: Opens of a new schema at once all succeed;
// the ones that waited for the first to create it find it made.
func TestConcurrentFirstOpen(t *testing.T) {
	ctx := context.Background()
	for try := range 5 {
		dsn := freshDSN(t)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := postgres.Open(ctx, dsn, nil)
				if err == nil {
					s.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("try %d, Open %d: %v", try, i, err)
			}
		}
	}
}

// BenchmarkReplicaLag measures how long a committed write takes to show
// on the hot standby (MNEMO_PG_STANDBY_DSN): each iteration upserts one
// record through a Store on the primary and then reads it with Get
// through a Store on the standby, again and again, until it is there. It
// reports the 50th and 99th percentiles of the time from Upsert's return
// to the first Get that sees the record, and how many Gets that took.
func BenchmarkReplicaLag(b *testing.B) {
	ctx := context.Background()
	dsn := freshDSN(b)
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	schema, _, _ := strings.Cut(u.Query().Get("search_path"), ",")
	_, pc := openCollection(b, dsn, "lag", mnemo.CollectionConfig{Dimension: 2})
	waitReplay(b)
	standby, err := postgres.Open(ctx, withSearchPath(b, standbyDSN(b), schema), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer standby.Close()
	sc, err := standby.Collection(ctx, "lag")
	if err != nil {
		b.Fatal(err)
	}
	var lags []time.Duration
	gets := 0
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("r%d", i)
		if _, err := pc.Upsert(ctx, mnemo.Record{ID: id, Vector: []float32{1, 0}, Content: "lag"}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for {
			gets++
			_, ok, err := sc.Get(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if ok {
				break
			}
			if time.Since(start) > 10*time.Second {
				b.Fatalf("record %s not on the standby 10 s after it was written", id)
			}
		}
		lags = append(lags, time.Since(start))
	}
	b.ReportMetric(percentile(lags, 0.5), "lag-p50-us")
	b.ReportMetric(percentile(lags, 0.99), "lag-p99-us")
	b.ReportMetric(float64(gets)/float64(len(lags)), "gets/write")
}
