//go:build linux || darwin

package engine

import (
	"github.com/mnemodb/mnemo"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemodb/mnemo/engine/internal/localsock"
)

// selfHeld makes DialLive take this process for the holder of every
// database: F_GETLK does not report a lock to the process that holds it,
// so a test that is its own holder says so.
func selfHeld(t testing.TB) {
	t.Helper()
	old := liveHolder
	liveHolder = func(string) (int, bool) { return os.Getpid(), true }
	t.Cleanup(func() { liveHolder = old })
}

const liveDim = 8

// liveRecords fills a collection with n records: a vector, a content
// whose words overlap, metadata for filters and a sequence for Spread.
func liveRecords(n int, seed uint64) []mnemo.Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"apple", "river", "stone", "cloud", "market", "engine", "violet", "harbor"}
	recs := make([]mnemo.Record, n)
	for i := range recs {
		v := make([]float32, liveDim)
		for j := range v {
			v[j] = rng.Float32()*2 - 1
		}
		var text []string
		for range 3 + rng.IntN(5) {
			text = append(text, words[rng.IntN(len(words))])
		}
		recs[i] = mnemo.Record{
			ID: fmt.Sprintf("r%04d", i), Vector: v, Content: strings.Join(text, " "),
			Metadata: map[string]any{"n": i, "kind": []string{"a", "b", "c"}[i%3], "session": i / 10, "pos": i % 10},
		}
	}
	return recs
}

// openLive opens a database of one collection with n records, and dials
// its live access.
func openLive(t testing.TB, n int) (*DB, *Live) {
	t.Helper()
	selfHeld(t)
	db := mustOpen(t, filepath.Join(t.TempDir(), "db"), nil)
	c := mustCollection(t, db, "docs", mnemo.CollectionConfig{Dimension: liveDim})
	recs := liveRecords(n, 1)
	for i := 0; i < len(recs); i += 100 {
		if _, err := c.Upsert(ctx, recs[i:min(i+100, len(recs))]...); err != nil {
			t.Fatal(err)
		}
	}
	l, err := DialLive(ctx, db.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); db.Close() })
	return db, l
}

// sameJSON fails unless a and b encode the same.
func sameJSON(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: %v %v", what, err1, err2)
	}
	if !bytes.Equal(ja, jb) {
		t.Fatalf("%s differs:\n direct %s\n live   %s", what, ja, jb)
	}
}

func TestLiveReadsMatchDirect(t *testing.T) {
	db, l := openLive(t, 500)
	direct := db.Store()
	dc, err := direct.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	lc, err := l.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if !dc.Config().Equal(lc.Config()) || lc.Name() != "docs" {
		t.Fatalf("config: %+v vs %+v", dc.Config(), lc.Config())
	}
	names, err := l.Collections(ctx)
	if err != nil || len(names) != 1 || names[0] != "docs" {
		t.Fatal(names, err)
	}
	if n, err := lc.Count(ctx); n != 500 || err != nil {
		t.Fatal(n, err)
	}
	for _, id := range []string{"r0000", "r0499", "r0250", "missing"} {
		dr, dok, derr := dc.Get(ctx, id)
		lr, lok, lerr := lc.Get(ctx, id)
		if dok != lok || (derr == nil) != (lerr == nil) {
			t.Fatalf("get %s: %v %v vs %v %v", id, dok, derr, lok, lerr)
		}
		sameJSON(t, "get "+id, dr, lr)
	}
	_, _, derr := dc.Scan(ctx, "", 0)
	_, _, lerr := lc.Scan(ctx, "", 0)
	if derr == nil || lerr == nil || derr.Error() != lerr.Error() || !errors.Is(lerr, mnemo.ErrBadQuery) {
		t.Fatalf("scan limit 0: %v / %v", derr, lerr)
	}
	for _, limit := range []int{7, 1000, 20000} {
		var dall, lall []mnemo.Record
		for _, side := range []struct {
			c   mnemo.Collection
			out *[]mnemo.Record
		}{{dc, &dall}, {lc, &lall}} {
			after := ""
			for {
				page, next, err := side.c.Scan(ctx, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				*side.out = append(*side.out, page...)
				if next == "" {
					break
				}
				after = next
			}
		}
		if len(dall) != 500 {
			t.Fatalf("scan limit %d: %d records", limit, len(dall))
		}
		sameJSON(t, fmt.Sprintf("scan limit %d", limit), dall, lall)
	}
	min := float32(0.1)
	q := liveRecords(1, 99)[0].Vector
	and, _ := mnemo.ParseFilter(`{"$and": [{"kind": {"$in": ["a", "b"]}}, {"n": {"$gte": 100}}], "pos": {"$ne": 3}}`)
	or, _ := mnemo.ParseFilter(`{"$or": [{"kind": "c"}, {"n": {"$lt": 20}}, {"pos": {"$exists": false}}, {"kind": {"$nin": []}}]}`)
	queries := map[string]mnemo.Query{
		"vector":         {Vector: q, K: 10},
		"vector exact":   {Vector: q, K: 25, Exact: true, WithVectors: true},
		"vector ef":      {Vector: q, K: 5, Ef: 64},
		"vector filter":  {Vector: q, K: 10, Filter: and},
		"vector min sim": {Vector: q, K: 50, MinSimilarity: &min},
		"text":           {Text: "river stone", K: 10},
		"text filter":    {Text: "violet", K: 10, Filter: or},
		"text bm25":      {Text: "apple market", K: 10, BM25: &mnemo.BM25{K1: 1.5, B: 0.5}},
		"text spread":    {Text: "harbor cloud", K: 10, Spread: &mnemo.Spread{Group: "session", Position: "pos", Weight: 0.5}},
		"hybrid":         {Vector: q, Text: "engine apple", K: 10},
		"hybrid rrf":     {Vector: q, Text: "engine apple", K: 10, Fusion: mnemo.Fusion{Method: mnemo.FusionRRF, Depth: 40}},
		"hybrid weight":  {Vector: q, Text: "cloud", Mode: mnemo.ModeHybrid, K: 10, Fusion: mnemo.Fusion{VectorWeight: 0.7}, Filter: and},
		"text no terms":  {Text: "?", K: 10},
	}
	for name, q := range queries {
		dh, derr := dc.Query(ctx, q)
		lh, lerr := lc.Query(ctx, q)
		if derr != nil || lerr != nil {
			t.Fatalf("%s: %v / %v", name, derr, lerr)
		}
		if len(dh) == 0 && name != "text no terms" {
			t.Fatalf("%s: no hits", name)
		}
		sameJSON(t, name, dh, lh)
	}
	// Errors are the same, and match the same sentinels.
	bad := mnemo.Query{Vector: []float32{1, 2}, K: 3}
	_, derr = dc.Query(ctx, bad)
	_, lerr = lc.Query(ctx, bad)
	if !errors.Is(lerr, mnemo.ErrDimension) || derr.Error() != lerr.Error() {
		t.Fatalf("bad query: %v / %v", derr, lerr)
	}
	if _, err := l.Collection(ctx, "nope"); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatal(err)
	}
	// Stats are the holder's.
	ds, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := l.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "stats", ds, ls)
	// Writes are refused.
	if _, err := lc.Upsert(ctx, mnemo.Record{ID: "x", Vector: q}); !errors.Is(err, ErrReadOnly) {
		t.Fatal(err)
	}
	if _, err := lc.Delete(ctx, "r0001"); !errors.Is(err, ErrReadOnly) {
		t.Fatal(err)
	}
	if _, err := l.CreateCollection(ctx, "x", mnemo.CollectionConfig{Dimension: 2}); !errors.Is(err, ErrReadOnly) {
		t.Fatal(err)
	}
	if err := l.DropCollection(ctx, "docs"); !errors.Is(err, ErrReadOnly) {
		t.Fatal(err)
	}
	if l.Holder() != os.Getpid() || l.Dir() != db.dir {
		t.Fatal(l.Holder(), l.Dir())
	}
}

func TestLiveBackupAndVerify(t *testing.T) {
	_, l := openLive(t, 300)
	dest := filepath.Join(t.TempDir(), "copy")
	if err := l.Backup(ctx, "relative/copy"); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Fatalf("relative destination: %v", err)
	}
	if err := l.Backup(ctx, dest); err != nil {
		t.Fatal(err)
	}
	if err := l.Backup(ctx, dest); !errors.Is(err, ErrBackupTarget) {
		t.Fatalf("backup into a full directory: %v", err)
	}
	ps, n, err := l.Verify(ctx)
	if err != nil || len(ps) != 0 || n != 1 {
		t.Fatal(ps, n, err)
	}
	cp := mustOpen(t, dest, &Options{ReadOnly: true})
	defer cp.Close()
	c, _ := cp.Collection("docs")
	if c.Count() != 300 {
		t.Fatal(c.Count())
	}
}

func TestLiveOff(t *testing.T) {
	selfHeld(t)
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, &Options{NoLiveAccess: true})
	defer db.Close()
	if _, err := os.Lstat(filepath.Join(dir, liveSocket)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket with NoLiveAccess: %v", err)
	}
	_, err := DialLive(ctx, dir)
	if !errors.Is(err, ErrNoLiveAccess) || !strings.Contains(err.Error(), "NoLiveAccess") {
		t.Fatal(err)
	}
}

func TestLiveSocketLifecycle(t *testing.T) {
	selfHeld(t)
	// A path longer than a socket name can be still serves (Linux).
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60), "db")
	dir := filepath.Join(t.TempDir(), "db")
	for _, dir := range []string{dir, long} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		// A socket a killed holder left.
		stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: shortPath(t, dir), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		stale.SetUnlinkOnClose(false)
		stale.Close()
		db := mustOpen(t, dir, nil)
		mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
		fi, err := os.Lstat(filepath.Join(dir, liveSocket))
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
			t.Fatalf("%s: %v %v", dir, fi.Mode(), err)
		}
		l, err := DialLive(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if names, err := l.Collections(ctx); err != nil || len(names) != 1 {
			t.Fatal(names, err)
		}
		l.Close()
		db.Close()
		if _, err := os.Lstat(filepath.Join(dir, liveSocket)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("socket after Close: %v", err)
		}
		db = mustOpen(t, dir, nil) // a directory with a stale socket opens
		db.Close()
	}
}

// shortPath returns dir's socket path, through /proc/self/fd when too
// long for a socket name (the directory stays open until the test ends).
func shortPath(t *testing.T, dir string) string {
	p := filepath.Join(dir, liveSocket)
	if len(p) < 100 {
		return p
	}
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), liveSocket)
}

func TestLiveRefusesImpostors(t *testing.T) {
	selfHeld(t)
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, nil)
	defer db.Close()
	sock := filepath.Join(dir, liveSocket)
	t.Run("another holder", func(t *testing.T) {
		// The socket is served by this process, the lock held by another.
		liveHolder = func(string) (int, bool) { return 1, true }
		defer func() { liveHolder = func(string) (int, bool) { return os.Getpid(), true } }()
		if _, err := DialLive(ctx, dir); !errors.Is(err, ErrNoLiveAccess) || !strings.Contains(err.Error(), "refused") {
			t.Fatal(err)
		}
	})
	t.Run("another database", func(t *testing.T) {
		idPath := filepath.Join(dir, identityFile)
		orig, err := os.ReadFile(idPath)
		if err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(idPath, orig, 0o644)
		forged := bytes.Replace(orig, []byte(db.id.ID[:8]), []byte("00000000"), 1)
		if err := os.WriteFile(idPath, forged, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := DialLive(ctx, dir); !errors.Is(err, ErrNoLiveAccess) || !strings.Contains(err.Error(), "refused") {
			t.Fatal(err)
		}
	})
	t.Run("open mode", func(t *testing.T) {
		if err := os.Chmod(sock, 0o666); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(sock, 0o600)
		if _, err := DialLive(ctx, dir); !errors.Is(err, ErrNoLiveAccess) || !errors.Is(err, localsock.ErrPeer) && !strings.Contains(err.Error(), "untrusted") {
			t.Fatal(err)
		}
	})
}

// rawLive sends raw bytes to the live socket of dir and returns what
// comes back before the server closes the connection or timeout passes.
func rawLive(t *testing.T, dir string, req []byte, timeout time.Duration) string {
	t.Helper()
	c, _, err := localsock.Dial(filepath.Join(dir, liveSocket))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	go c.Write(req)
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestLiveHostileRequests(t *testing.T) {
	db, l := openLive(t, 20)
	dir := db.dir
	post := func(op, body string) string {
		return fmt.Sprintf("POST /v1/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", op, len(body), body)
	}
	cases := map[string]struct {
		req  string
		want string
	}{
		"garbage":        {"\x00\xff\x13garbage\r\n\r\n", "400 Bad Request"},
		"unknown op":     {post("drop", "{}"), "404"},
		"GET":            {"GET /v1/stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "405"},
		"bad JSON":       {post("get", `{"col`), `"kind":"bad_query"`},
		"trailing data":  {post("stats", "{}{}"), "400"},
		"wrong types":    {post("scan", `{"collection": 12}`), "400"},
		"no collection":  {post("query", `{"collection": "no"}`), "404"},
		"bad filter":     {post("query", `{"collection":"docs","query":{"text":"a","filter":{"$x":1}}}`), `"kind":"bad_filter"`},
		"huge scan page": {post("scan", `{"collection":"docs","limit":1000000000}`), "200 OK"},
		"relative dest":  {post("backup", `{"dest":"x/y"}`), "not an absolute path"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := rawLive(t, dir, []byte(tc.req), 5*time.Second); !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("huge body", func(t *testing.T) {
		body := `{"collection":"docs","id":"` + strings.Repeat("x", liveMaxBody) + `"}`
		req, _ := http.NewRequest("POST", "http://mnemo/v1/get", strings.NewReader(body))
		res, err := l.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatal(res.Status)
		}
	})
	// After all that, the server still answers.
	if _, err := l.Stats(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLiveSlowClient(t *testing.T) {
	old := liveIdleTimeout
	liveIdleTimeout = 300 * time.Millisecond
	defer func() { liveIdleTimeout = old }()
	db, l := openLive(t, 5)
	// A client that sends half a header and stalls is cut off.
	start := time.Now()
	got := rawLive(t, db.dir, []byte("POST /v1/stats HTTP/1.1\r\nHost: x\r\n"), 10*time.Second)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a stalled client kept its connection for %s (%q)", took, got)
	}
	// Slots held by stalled clients come back: more of them than the
	// connection limit do not lock out a client.
	var wg sync.WaitGroup
	for range liveMaxConns + 8 {
		wg.Go(func() { rawLive(t, db.dir, []byte("POST /v1/st"), 10*time.Second) })
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := l.Stats(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

func TestLivePanicFreesSlot(t *testing.T) {
	liveHook = func(op string) {
		if op == "count" {
			panic("test panic")
		}
	}
	defer func() { liveHook = nil }()
	_, l := openLive(t, 5)
	c, err := l.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	for range liveMaxActive * 3 { // each panic must free its slot
		if _, err := c.Count(ctx); err == nil || !strings.Contains(err.Error(), "internal error") {
			t.Fatal(err)
		}
	}
	if _, err := l.Stats(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLiveManyClientsAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	db, l0 := openLive(t, 200)
	l0.Close()
	q := liveRecords(1, 7)[0].Vector
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	started := make(chan struct{}, 100)
	for i := range 100 {
		wg.Go(func() {
			l, err := DialLive(ctx, db.dir)
			if err != nil {
				errs <- err
				started <- struct{}{}
				return
			}
			defer l.Close()
			c, err := l.Collection(ctx, "docs")
			if err != nil {
				errs <- err
				started <- struct{}{}
				return
			}
			started <- struct{}{}
			for j := 0; ; j++ {
				if _, err := c.Query(ctx, mnemo.Query{Vector: q, K: 5}); err != nil {
					return // the database closed
				}
				if _, _, err := c.Get(ctx, fmt.Sprintf("r%04d", (i+j)%200)); err != nil {
					return
				}
			}
		})
	}
	for range 100 {
		<-started
	}
	close(errs)
	for err := range errs {
		t.Fatal(err) // every client got in before Close
	}
	start := time.Now()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*liveCloseWait {
		t.Fatalf("Close took %s", took)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("clients hang after Close")
	}
	// No goroutine of the server or the clients is left.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// BenchmarkLiveQuery compares a Get and a vector query in the holding
// process with the same through live access.
func BenchmarkLiveQuery(b *testing.B) {
	db, l := openLive(b, 5000)
	dc, _ := db.Store().Collection(ctx, "docs")
	lc, err := l.Collection(ctx, "docs")
	if err != nil {
		b.Fatal(err)
	}
	q := mnemo.Query{Vector: liveRecords(1, 5)[0].Vector, K: 10}
	for _, side := range []struct {
		name string
		c    mnemo.Collection
	}{{"direct", dc}, {"live", lc}} {
		b.Run("get/"+side.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, ok, err := side.c.Get(ctx, fmt.Sprintf("r%04d", i%5000)); !ok || err != nil {
					b.Fatal(ok, err)
				}
				i++
			}
		})
		b.Run("query/"+side.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if hits, err := side.c.Query(ctx, q); len(hits) != 10 || err != nil {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}

// FuzzLiveRequest sends any body to any op: the holder answers each with
// a status that names the problem, never with 500 (a panic), and goes on
// serving.
func FuzzLiveRequest(f *testing.F) {
	ops := []string{"identity", "stats", "collections", "collection", "count", "get", "scan", "query", "verify", "backup"}
	for i := range ops {
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Add(uint8(5), []byte(`{"collection":"docs","id":"r0001"}`))
	f.Add(uint8(6), []byte(`{"collection":"docs","after":"r0003","limit":-5}`))
	f.Add(uint8(7), []byte(`{"collection":"docs","query":{"vector":[1,2,3,4,5,6,7,8],"k":-1,"filter":{"n":{"$in":[1,"a",null]}}}}`))
	f.Add(uint8(7), []byte(`{"collection":"docs","query":{"text":"apple","mode":"hybrid","spread":{"weight":7}}}`))
	f.Add(uint8(7), []byte(`{"collection":"docs","query":{"vector":[1e39],"min_similarity":2,"bm25":{"k1":-1}}}`))
	f.Add(uint8(9), []byte(`{"dest":"/proc/self/nope"}`))
	f.Add(uint8(3), []byte(`[`))
	_, l := openLive(f, 50)
	dest := f.TempDir()
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		name := ops[int(op)%len(ops)]
		if name == "backup" {
			// Only into the test's directory.
			body = fmt.Appendf(nil, `{"dest":%q}`, filepath.Join(dest, fmt.Sprintf("b%x", body)))
			defer os.RemoveAll(dest)
		}
		req, _ := http.NewRequest("POST", "http://mnemo/v1/"+name, bytes.NewReader(body))
		res, err := l.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %q: %s %s", name, body, res.Status, b)
		}
		if res.StatusCode != http.StatusOK {
			var le liveError
			if err := json.Unmarshal(b, &le); err != nil || le.Error == "" {
				t.Fatalf("%s %q: %s with body %q", name, body, res.Status, b)
			}
		}
	})
}

// TestLiveScanPageBytes checks that a scan page through live access ends
// at about 16 MiB of records, and that paging on reads them all.
func TestLiveScanPageBytes(t *testing.T) {
	skipUnderRace(t, "stores and pages 20 MiB of content")
	db, l := openLive(t, 0)
	c, _ := db.Collection("docs")
	big := strings.Repeat("word ", (1<<20)/5)
	for i := range 20 {
		r := liveRecords(1, uint64(i))[0]
		r.ID, r.Content = fmt.Sprintf("big%02d", i), big
		if _, err := c.Upsert(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	lc, err := l.Collection(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	page, next, err := lc.Scan(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) < 10 || len(page) >= 20 || next != page[len(page)-1].ID {
		t.Fatalf("first page: %d records, next %q", len(page), next)
	}
	rest, next2, err := lc.Scan(ctx, next, 1000)
	if err != nil || next2 != "" || len(page)+len(rest) != 20 || rest[0].ID != fmt.Sprintf("big%02d", len(page)) {
		t.Fatalf("second page: %d records, next %q, %v", len(rest), next2, err)
	}
}
