package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

var ctx = context.Background()

func mustOpen(t testing.TB, dir string, opts *Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func mustCollection(t testing.TB, db *DB, name string, cfg mnemo.CollectionConfig) *Collection {
	t.Helper()
	c, err := db.CreateCollection(ctx, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func vec(xs ...float32) []float32 { return xs }

func TestBasicLifecycle(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "notes", mnemo.CollectionConfig{Dimension: 3})
	ids, err := c.Upsert(ctx,
		mnemo.Record{ID: "a", Vector: vec(1, 0, 0), Content: "alpha", Metadata: map[string]any{"kind": "x", "n": 1}},
		mnemo.Record{ID: "b", Vector: vec(0, 1, 0), Content: "beta", Metadata: map[string]any{"kind": "y", "n": 2}},
		mnemo.Record{Vector: vec(0, 0, 1), Content: "generated id"},
	)
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != "a" || ids[1] != "b" || len(ids[2]) != 36 {
		t.Fatalf("ids %v", ids)
	}
	f, _ := mnemo.ParseFilter(`{"kind": "y"}`)
	hits, err := c.Query(ctx, mnemo.Query{Vector: vec(1, 0.1, 0), K: 3, Filter: f})
	if err != nil || len(hits) != 1 || hits[0].Record.ID != "b" || hits[0].Record.Content != "beta" {
		t.Fatalf("filtered query: %+v, %v", hits, err)
	}
	hits, _ = c.Query(ctx, mnemo.Query{Vector: vec(1, 0.1, 0), K: 2})
	if len(hits) != 2 || hits[0].Record.ID != "a" || math.Abs(float64(hits[0].Similarity-(1-hits[0].Distance))) > 1e-6 {
		t.Fatalf("query: %+v", hits)
	}
	if n, err := c.Delete(ctx, "b", "nope"); n != 1 || err != nil {
		t.Fatalf("Delete = %d, %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, dir, nil)
	defer db.Close()
	c, err = db.Collection("notes")
	if err != nil {
		t.Fatal(err)
	}
	if c.Count() != 2 || c.Config().Dimension != 3 || c.Config().Metric != mnemo.Cosine {
		t.Fatalf("after reopen: %d records, config %+v", c.Count(), c.Config())
	}
	r, ok, err := c.Get(ctx, "a")
	if !ok || err != nil || r.Content != "alpha" || r.Metadata["n"] != 1.0 || !reflect.DeepEqual(r.Vector, vec(1, 0, 0)) {
		t.Fatalf("Get(a) = %+v, %v, %v", r, ok, err)
	}
	if _, ok, _ := c.Get(ctx, "b"); ok {
		t.Fatal("deleted record came back")
	}
	st, _ := c.Stats(ctx)
	if st.OpenedBy != "checkpoint+replay" || st.Records != 2 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := db.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 4}); !errors.Is(err, mnemo.ErrCollectionExists) {
		t.Fatalf("create with another config: %v", err)
	}
	if again, err := db.CreateCollection(ctx, "notes", mnemo.CollectionConfig{Dimension: 3, Metric: mnemo.Cosine, Index: mnemo.HNSW}); err != nil || again != c {
		t.Fatalf("create with the same config: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	nan := float32(math.NaN())
	tests := []struct {
		name string
		rec  mnemo.Record
		want error
	}{
		{"short vector", mnemo.Record{ID: "x", Vector: vec(1)}, mnemo.ErrDimension},
		{"NaN", mnemo.Record{ID: "x", Vector: vec(nan, 1)}, mnemo.ErrNonFinite},
		{"Inf", mnemo.Record{ID: "x", Vector: vec(float32(math.Inf(1)), 1)}, mnemo.ErrNonFinite},
		{"zero under cosine", mnemo.Record{ID: "x", Vector: vec(0, 0)}, mnemo.ErrZeroVector},
		{"long id", mnemo.Record{ID: strings.Repeat("x", mnemo.MaxIDLength+1), Vector: vec(1, 1)}, mnemo.ErrInvalidID},
		{"bad utf8 id", mnemo.Record{ID: "a\xffb", Vector: vec(1, 1)}, mnemo.ErrInvalidID},
		{"bad utf8 content", mnemo.Record{ID: "x", Vector: vec(1, 1), Content: "\xff"}, mnemo.ErrInvalidRecord},
		{"unencodable metadata", mnemo.Record{ID: "x", Vector: vec(1, 1), Metadata: map[string]any{"f": func() {}}}, mnemo.ErrInvalidRecord},
		{"NaN metadata", mnemo.Record{ID: "x", Vector: vec(1, 1), Metadata: map[string]any{"f": math.NaN()}}, mnemo.ErrInvalidRecord},
		{"bad utf8 metadata", mnemo.Record{ID: "x", Vector: vec(1, 1), Metadata: map[string]any{"s": "\xfe"}}, mnemo.ErrInvalidRecord},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The good record in the same batch must not be stored either.
			_, err := c.Upsert(ctx, mnemo.Record{ID: "good", Vector: vec(1, 1)}, tt.rec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if c.Count() != 0 {
				t.Fatalf("a rejected batch stored %d records", c.Count())
			}
		})
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "d", Vector: vec(1, 1)}, mnemo.Record{ID: "d", Vector: vec(1, 2)}); !errors.Is(err, mnemo.ErrInvalidRecord) {
		t.Fatalf("duplicate ids: %v", err)
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: vec(1)}); !errors.Is(err, mnemo.ErrDimension) {
		t.Fatalf("query dimension: %v", err)
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: vec(1, 1), K: -1}); !errors.Is(err, mnemo.ErrBadQuery) {
		t.Fatalf("negative k: %v", err)
	}
	if _, err := c.Delete(ctx, ""); !errors.Is(err, mnemo.ErrInvalidID) {
		t.Fatalf("delete empty id: %v", err)
	}
	if _, err := db.Collection("missing"); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("unknown collection: %v", err)
	}
	for _, cfg := range []mnemo.CollectionConfig{{}, {Dimension: -1}, {Dimension: 3, Index: "ivf"}, {Dimension: 3, M: 1}, {Dimension: 3, Metric: 9}} {
		if _, err := db.CreateCollection(ctx, "bad", cfg); !errors.Is(err, mnemo.ErrInvalidConfig) {
			t.Errorf("config %+v: %v", cfg, err)
		}
	}
	if _, err := db.CreateCollection(ctx, "", mnemo.CollectionConfig{Dimension: 2}); !errors.Is(err, mnemo.ErrInvalidConfig) {
		t.Errorf("empty name: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Upsert(cancelled, mnemo.Record{ID: "z", Vector: vec(1, 1)}); !errors.Is(err, context.Canceled) || c.Count() != 0 {
		t.Fatalf("cancelled upsert: %v, count %d", err, c.Count())
	}
}

func TestUseAfterCloseAndDrop(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	d := mustCollection(t, db, "d", mnemo.CollectionConfig{Dimension: 2})
	if err := db.DropCollection(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Upsert(ctx, mnemo.Record{ID: "x", Vector: vec(1, 1)}); !errors.Is(err, mnemo.ErrCollectionNotFound) {
		t.Fatalf("upsert into a dropped collection: %v", err)
	}
	if got := db.Collections(); !reflect.DeepEqual(got, []string{"c"}) {
		t.Fatalf("Collections = %v", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "x", Vector: vec(1, 1)}); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("upsert after close: %v", err)
	}
	if _, err := c.Query(ctx, mnemo.Query{Vector: vec(1, 1)}); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("query after close: %v", err)
	}
	if err := db.Close(); !errors.Is(err, mnemo.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
}

func TestSecondOpenFails(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, nil)
	defer db.Close()
	if _, err := Open(dir, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
}

// model is the obviously correct reference: a map of records.
type model map[string]mnemo.Record

func TestModel(t *testing.T) {
	for _, mode := range []string{"disk", "memfs"} {
		for _, kind := range []mnemo.IndexKind{mnemo.HNSW, mnemo.Flat} {
			t.Run(fmt.Sprintf("%s/%s", mode, kind), func(t *testing.T) { runModel(t, mode, kind) })
		}
	}
}

func runModel(t *testing.T, mode string, kind mnemo.IndexKind) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	dir, opts := t.TempDir(), &Options{CheckpointEvery: 7}
	if mode == "memfs" {
		dir, opts.FS = "db", vfs.NewMem()
	}
	db := mustOpen(t, dir, opts)
	defer func() { db.Close() }()
	cfg := mnemo.CollectionConfig{Dimension: 4, Metric: mnemo.L2, Index: kind, M: 4, EfConstruction: 16}
	c := mustCollection(t, db, "m", cfg)
	m := model{}
	// randRec returns a random record and whether Upsert must accept it.
	randRec := func() (mnemo.Record, bool) {
		id := fmt.Sprintf("r%02d", r.IntN(40))
		v := vec(float32(r.IntN(5)), float32(r.IntN(5)), float32(r.IntN(5)), r.Float32())
		meta, ok := randMeta(r)
		meta["g"], meta["s"] = float64(r.IntN(3)), id[:2]
		return mnemo.Record{ID: id, Vector: v, Content: "c" + id, Metadata: meta}, ok
	}
	for op := 0; op < 400; op++ {
		switch x := r.IntN(100); {
		case x < 45:
			rec, valid := randRec()
			batch := []mnemo.Record{rec}
			if r.IntN(3) == 0 {
				if b, ok := randRec(); b.ID != batch[0].ID {
					batch, valid = append(batch, b), valid && ok
				}
			}
			_, err := c.Upsert(ctx, batch...)
			if !valid {
				// Refused as a whole; checkAgainstModel sees nothing changed.
				if !errors.Is(err, mnemo.ErrInvalidRecord) {
					t.Fatalf("Upsert of invalid metadata: err = %v, want ErrInvalidRecord", err)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range batch {
				rec.Metadata = normalized(t, rec.Metadata)
				m[rec.ID] = rec
			}
		case x < 65:
			id := fmt.Sprintf("r%02d", r.IntN(40))
			n, err := c.Delete(ctx, id)
			_, had := m[id]
			if err != nil || (n == 1) != had {
				t.Fatalf("Delete(%s) = %d, %v; model had it: %v", id, n, err, had)
			}
			delete(m, id)
		case x < 70:
			if err := c.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
		case x < 74:
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = mustOpen(t, dir, opts)
			var err error
			if c, err = db.Collection("m"); err != nil {
				t.Fatal(err)
			}
		default:
			q := vec(float32(r.IntN(5)), float32(r.IntN(5)), float32(r.IntN(5)), 0.5)
			var f *mnemo.Filter
			if r.IntN(2) == 0 {
				f, _ = mnemo.ParseFilter(fmt.Sprintf(`{"g": {"$lte": %d}}`, r.IntN(3)))
			}
			checkExactQuery(t, c, m, q, 1+r.IntN(6), f)
		}
		checkAgainstModel(t, c, m)
	}
}

func checkAgainstModel(t *testing.T, c *Collection, m model) {
	t.Helper()
	if c.Count() != len(m) {
		t.Fatalf("Count = %d, model %d", c.Count(), len(m))
	}
	var all []mnemo.Record
	after := ""
	for {
		page, next, err := c.Scan(ctx, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		after = next
	}
	if len(all) != len(m) || !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].ID < all[j].ID }) {
		t.Fatalf("Scan returned %d records (sorted: %v), model %d", len(all), sort.SliceIsSorted(all, func(i, j int) bool { return all[i].ID < all[j].ID }), len(m))
	}
	for _, got := range all {
		want, ok := m[got.ID]
		if !ok || !sameRecord(got, want) {
			t.Fatalf("record %q: got %+v, model %+v", got.ID, got, want)
		}
		if g, ok, err := c.Get(ctx, got.ID); !ok || err != nil || !sameRecord(g, want) {
			t.Fatalf("Get(%q) = %+v, %v, %v", got.ID, g, ok, err)
		}
	}
}

// sameRecord compares records; b's metadata is as reads return it (see
// normalized).
func sameRecord(a, b mnemo.Record) bool {
	return a.ID == b.ID && a.Content == b.Content && reflect.DeepEqual(a.Vector, b.Vector) &&
		reflect.DeepEqual(a.Metadata, b.Metadata)
}

// metaStrings are keys and strings for randMeta: unicode, escapes, JSON
// syntax and path syntax.
var metaStrings = []string{"", "a", "é", "日本語", "🙂 emoji", "a.b", "[0]", `"q"`, `\`, "<&>", "\u2028\u2029", "\x00nul", " ", "$and"}

// randMeta returns random metadata and whether Upsert must accept it:
// nested objects and lists, unicode, numbers of several Go types; now and
// then a chain of objects near MaxMetadataDepth or a string that is not
// UTF-8.
func randMeta(r *rand.Rand) (map[string]any, bool) {
	meta := map[string]any{}
	ok := true
	for n := r.IntN(3); n > 0; n-- {
		meta[metaStrings[r.IntN(len(metaStrings))]] = randMetaValue(r, 4)
	}
	switch r.IntN(10) {
	case 0:
		// A chain of d objects under meta, which is level 1.
		d := mnemo.MaxMetadataDepth - 4 + r.IntN(8)
		var v any = "end"
		for i := 0; i < d; i++ {
			v = map[string]any{metaStrings[r.IntN(len(metaStrings))]: v}
		}
		meta["deep"], ok = v, 1+d <= mnemo.MaxMetadataDepth
	case 1:
		meta["bad"], ok = []any{"ok", "a\xffb"}, false
	}
	return meta, ok
}

// randMetaValue returns a valid metadata value nested at most depth levels.
func randMetaValue(r *rand.Rand, depth int) any {
	str := func() string { return metaStrings[r.IntN(len(metaStrings))] }
	switch r.IntN(11) {
	case 0, 1:
		if depth > 0 {
			m := map[string]any{}
			for n := r.IntN(4); n > 0; n-- {
				m[str()] = randMetaValue(r, depth-1)
			}
			return m
		}
	case 2, 3:
		if depth > 0 {
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = randMetaValue(r, depth-1)
			}
			return l
		}
	case 4:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 5:
		return r.IntN(1<<20) - 1<<19
	case 6:
		return float32(r.NormFloat64())
	case 7:
		return json.Number(fmt.Sprintf("%de%d", r.IntN(1000)-500, r.IntN(600)-300))
	case 8:
		return r.IntN(2) == 0
	case 9:
		return nil
	}
	return str()
}

// checkExactQuery compares an exact-mode query with the model's answer by
// distance.
func checkExactQuery(t *testing.T, c *Collection, m model, q []float32, k int, f *mnemo.Filter) {
	t.Helper()
	hits, err := c.Query(ctx, mnemo.Query{Vector: q, K: k, Filter: f, Exact: true, WithVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []float32
	for _, rec := range m {
		if f.Match(rec.Metadata) {
			var d float32
			for i := range q {
				d += (q[i] - rec.Vector[i]) * (q[i] - rec.Vector[i])
			}
			want = append(want, d)
		}
	}
	slices.Sort(want)
	want = want[:min(k, len(want))]
	if len(hits) != len(want) {
		t.Fatalf("exact query k=%d: %d hits, model %d", k, len(hits), len(want))
	}
	for i, h := range hits {
		if math.Abs(float64(h.Distance-want[i])) > 1e-4 {
			t.Fatalf("exact query hit %d: distance %v, model %v", i, h.Distance, want[i])
		}
		if !sameRecord(h.Record, m[h.Record.ID]) {
			t.Fatalf("hit %q does not match the model", h.Record.ID)
		}
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 3; i++ {
		db := mustOpen(t, t.TempDir(), &Options{CheckpointEvery: 1})
		c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
		for j := 0; j < 5; j++ {
			c.Upsert(ctx, mnemo.Record{ID: fmt.Sprint(j), Vector: vec(1, float32(j))})
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestQueryContentSources checks that hits carry content whether it is kept
// in memory (short) or read from disk (long), and vectors only on request.
func TestQueryContentSources(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2, Metric: mnemo.L2})
	long := strings.Repeat("long content ", 200)
	c.Upsert(ctx, mnemo.Record{ID: "short", Vector: vec(0, 0), Content: "short"},
		mnemo.Record{ID: "long", Vector: vec(1, 0), Content: long, Metadata: map[string]any{"k": "v"}})
	for _, withVectors := range []bool{false, true} {
		hits, err := c.Query(ctx, mnemo.Query{Vector: vec(0, 0), K: 2, WithVectors: withVectors})
		if err != nil || len(hits) != 2 {
			t.Fatalf("%v, %v", hits, err)
		}
		if hits[0].Record.Content != "short" || hits[1].Record.Content != long || hits[1].Record.Metadata["k"] != "v" {
			t.Fatalf("contents %q, %q...", hits[0].Record.Content, hits[1].Record.Content[:20])
		}
		if got := hits[1].Record.Vector != nil; got != withVectors {
			t.Fatalf("WithVectors %v: vector %v", withVectors, hits[1].Record.Vector)
		}
	}
	// Replacing long content with short moves it into memory and back.
	c.Upsert(ctx, mnemo.Record{ID: "long", Vector: vec(1, 0), Content: "now short"})
	hits, _ := c.Query(ctx, mnemo.Query{Vector: vec(1, 0), K: 1})
	if hits[0].Record.Content != "now short" || hits[0].Record.Metadata != nil {
		t.Fatalf("after replace: %+v", hits[0].Record)
	}
}

func TestMinSimilarity(t *testing.T) {
	db := mustOpen(t, "", &Options{InMemory: true})
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: 2})
	c.Upsert(ctx, mnemo.Record{ID: "same", Vector: vec(1, 0)}, mnemo.Record{ID: "right", Vector: vec(0, 1)},
		mnemo.Record{ID: "opposite", Vector: vec(-1, 0)})
	for _, tt := range []struct {
		min  float32
		want []string
	}{
		{1, []string{"same"}}, // a hit exactly at the threshold is kept
		{0, []string{"same", "right"}},
		{-1, []string{"same", "right", "opposite"}},
	} {
		m := tt.min
		hits, err := c.Query(ctx, mnemo.Query{Vector: vec(1, 0), K: 3, MinSimilarity: &m})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.Record.ID)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("min %v: %v, want %v", tt.min, got, tt.want)
		}
	}
}

// TestStaleCheckpoint removes log records the checkpoint does not cover, so
// the index it yields misses records: Open must notice and rebuild.
func TestStaleCheckpoint(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, "db", &Options{FS: fs, CheckpointEvery: -1})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	c.Upsert(ctx, crashBatchRecords(0)...)
	c.Checkpoint(ctx)
	c.Upsert(ctx, crashBatchRecords(1)...)
	if err := c.log.Truncate(c.log.LastSeq(), nil); err != nil { // lose the replay
		t.Fatal(err)
	}
	c.sinceCheckpoint.Store(0)
	db.Close()
	db = mustOpen(t, "db", &Options{FS: fs})
	defer db.Close()
	c, _ = db.Collection("c")
	st, _ := c.Stats(ctx)
	if st.OpenedBy != "rebuild" || !strings.Contains(st.RebuildReason, "after replay") {
		t.Fatalf("opened by %q (%q)", st.OpenedBy, st.RebuildReason)
	}
	verifyBatches(t, c, 1)
}
