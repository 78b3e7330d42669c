package engine

import (
	"github.com/mnemodb/mnemo"

	"bytes"
	"context"
	"encoding/json"
	"expvar"
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/metrics"
	"github.com/mnemodb/mnemo/metrics/expvarmetrics"
)

// counters reads an expvarmetrics map as plain numbers: the counters by
// name, histograms by name as their count, keyed maps as name[key].
func counters(t *testing.T, m *expvar.Map) map[string]int64 {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(m.String()), &raw); err != nil {
		t.Fatalf("%v in %s", err, m)
	}
	out := map[string]int64{}
	for name, v := range raw {
		var n int64
		var h struct{ Count *int64 }
		var keyed map[string]json.RawMessage
		switch {
		case json.Unmarshal(v, &n) == nil:
			out[name] = n
		case json.Unmarshal(v, &h) == nil && h.Count != nil:
			out[name] = *h.Count
		case json.Unmarshal(v, &keyed) == nil:
			for k, kv := range keyed {
				if json.Unmarshal(kv, &n) != nil {
					json.Unmarshal(kv, &h)
					n = *h.Count
				}
				out[name+"["+k+"]"] = n
			}
		}
	}
	return out
}

func noneFilter(t *testing.T) *mnemo.Filter {
	f, err := mnemo.NewFilter(map[string]any{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// moved returns what changed between two readings of counters.
func moved(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// TestMetrics checks that each operation moves the counters the metrics
// package documents for it, and nothing else.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	m := new(expvar.Map)
	rec := expvarmetrics.New(m)
	var events []metrics.Event
	opts := &Options{FS: vfs.NewMem(), Metrics: metrics.Multi(rec, metrics.Func(func(e metrics.Event) { events = append(events, e) }))}
	db, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	step := func(name string, want map[string]int64, do func() error) {
		t.Helper()
		before := counters(t, m)
		if err := do(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := moved(before, counters(t, m))
		for k, v := range want {
			if v < 0 { // only "moved by at least one"
				if got[k] < 1 {
					t.Errorf("%s: %s moved by %d, want > 0", name, k, got[k])
				}
				delete(got, k)
				continue
			}
			if got[k] != v {
				t.Errorf("%s: %s moved by %d, want %d", name, k, got[k], v)
			}
			delete(got, k)
		}
		for k, v := range got {
			t.Errorf("%s: %s moved by %d, want no change", name, k, v)
		}
	}
	const any = -1
	commit := map[string]int64{"commits": 1, "commit_bytes": any, "commit_seconds": 1, "syncs": 1, "sync_seconds": 1}
	with := func(a, b map[string]int64) map[string]int64 {
		r := map[string]int64{}
		for k, v := range a {
			r[k] = v
		}
		for k, v := range b {
			r[k] = v
		}
		return r
	}
	var c *Collection
	step("create", commit, func() (err error) {
		c, err = db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
		return err
	})
	recs := []mnemo.Record{
		{ID: "a", Vector: []float32{1, 0}, Content: "red apple"},
		{ID: "b", Vector: []float32{0, 1}, Content: "green pear"},
		{ID: "c", Vector: []float32{1, 1}, Content: "red pear"},
	}
	step("upsert", with(commit, map[string]int64{"upserts": 1, "upsert_records": 3, "upsert_seconds": 1}), func() error {
		_, err := c.Upsert(ctx, recs...)
		return err
	})
	if e := events[len(events)-1]; e.Op != metrics.OpUpsert || e.Collection != "c" || e.Records != 3 || e.Bytes <= 0 || e.Duration <= 0 {
		t.Errorf("upsert event %+v", e)
	}
	for _, q := range []struct {
		query mnemo.Query
		key   string
	}{
		{mnemo.Query{Vector: []float32{1, 0}, K: 2}, "vector/exact"},
		{mnemo.Query{Vector: []float32{1, 0}, K: 2, Ef: 16}, "vector/graph"},
		{mnemo.Query{Vector: []float32{1, 0}, K: 2, Ef: 16, Filter: noneFilter(t)}, "vector/exact"},
		{mnemo.Query{Text: "pear", K: 2}, "text/text"},
		{mnemo.Query{Vector: []float32{1, 0}, Text: "pear", K: 2, Ef: 16}, "hybrid/graph"},
	} {
		step("query "+q.key, map[string]int64{"queries[" + q.key + "]": 1, "query_seconds[" + q.key + "]": 1}, func() error {
			hits, err := c.Query(ctx, q.query)
			if e := events[len(events)-1]; err == nil && (e.Records != len(hits) || e.Mode+"/"+e.Plan != q.key) {
				t.Errorf("query event %+v, %d hits", e, len(hits))
			}
			return err
		})
	}
	step("delete", with(commit, map[string]int64{"deletes": 1, "delete_records": 1, "delete_seconds": 1}), func() error {
		_, err := c.Delete(ctx, "a", "absent")
		return err
	})
	step("checkpoint", with(commit, map[string]int64{"checkpoints": 1, "checkpoint_bytes": any, "checkpoint_seconds": 1}), func() error {
		return c.Checkpoint(ctx)
	})
	step("errors", map[string]int64{"errors[upsert]": 2, "errors[query]": 1, "errors[delete]": 1}, func() error {
		if _, err := c.Upsert(ctx, mnemo.Record{Vector: []float32{1, 2, 3}}); err == nil {
			t.Error("upsert of a 3-dimensional vector into a 2-dimensional collection succeeded")
		}
		if _, err := c.Upsert(ctx, mnemo.Record{ID: "x", Vector: []float32{1, 2}}, mnemo.Record{ID: "x", Vector: []float32{1, 2}}); err == nil {
			t.Error("upsert of one id twice succeeded")
		}
		if _, err := c.Query(ctx, mnemo.Query{Vector: []float32{1}, K: 1}); err == nil {
			t.Error("query of a 1-dimensional vector succeeded")
		}
		if _, err := c.Delete(ctx, ""); err == nil {
			t.Error("delete of an empty id succeeded")
		}
		return nil
	})

	// No sync when the database does not wait for its log.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	opts.NoSync = true
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	c, _ = db.Collection("c")
	step("upsert with NoSync", map[string]int64{"upserts": 1, "upsert_records": 1, "upsert_seconds": 1, "commits": 1, "commit_bytes": any, "commit_seconds": 1}, func() error {
		_, err := c.Upsert(ctx, mnemo.Record{ID: "d", Vector: []float32{2, 1}})
		return err
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	opts.NoSync = false

	// Damage: no checkpoint (its descriptor removed) and no full-text
	// entries; the next Open rebuilds both from the three records.
	if db, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	c, _ = db.Collection("c")
	b := db.pdb.NewBatch()
	b.Delete(checkpointKey(c.id), nil)
	b.DeleteRange(cidPrefix(tagText, c.id), prefixEnd(cidPrefix(tagText, c.id)), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	// Close writes no checkpoint: nothing logged or replayed since one.
	c.loadInfo.replayed = 0
	c.sinceCheckpoint.Store(0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	step("open with damage", with(commit, map[string]int64{
		"commits": 2, "syncs": 2, "sync_seconds": 2, "commit_seconds": 2, // the full-text entries, the checkpoint's descriptor
		"text_rebuilds": 1, "text_rebuild_records": 3,
		"index_rebuilds": 1, "index_rebuild_records": 3, "index_rebuild_seconds": 1,
		"checkpoints": 1, "checkpoint_bytes": any, "checkpoint_seconds": 1,
	}), func() (err error) {
		db, err = Open("db", opts)
		return err
	})
	if st, _ := db.Collection("c"); st == nil {
		t.Fatal("collection gone")
	} else if s, _ := st.Stats(ctx); s.OpenedBy != "rebuild" || s.TextRebuilt != 3 {
		t.Errorf("opened by %s, %d text entries rebuilt; want rebuild, 3", s.OpenedBy, s.TextRebuilt)
	}
}

// TestLogger checks that what the engine logs reaches Options.Logger as
// structured records, and Options.Log as text when Logger is unset.
func TestLogger(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	db, err := Open("db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection(ctx, "c", mnemo.CollectionConfig{Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upsert(ctx, mnemo.Record{ID: "a", Vector: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	b := db.pdb.NewBatch()
	b.Delete(checkpointKey(c.id), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	b.Close()
	c.sinceCheckpoint.Store(0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var js, text, ignored bytes.Buffer
	// Logger wins over Log.
	db, err = Open("db", &Options{FS: fs, Logger: slog.New(slog.NewJSONHandler(&js, nil)), Log: &ignored})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	var rebuilt struct {
		Level, Msg, Collection, Reason string
		Records                        int
	}
	for line := range strings.Lines(js.String()) {
		var r struct{ Msg string }
		if json.Unmarshal([]byte(line), &r); strings.HasPrefix(r.Msg, "rebuilding index") {
			json.Unmarshal([]byte(line), &rebuilt)
		}
	}
	if rebuilt.Level != "WARN" || rebuilt.Collection != "c" || rebuilt.Records != 1 || rebuilt.Reason == "" {
		t.Errorf("no structured record of the rebuild in %s (got %+v)", js.String(), rebuilt)
	}
	if ignored.Len() > 0 {
		t.Errorf("Log received %q with Logger set", ignored.String())
	}
	// Log alone: the text handler at Debug, Pebble's messages included.
	if db, err = Open("db", &Options{FS: fs, Log: &text}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if !strings.Contains(text.String(), "component=pebble") {
		t.Errorf("Log received no Pebble message at Debug level: %q", text.String())
	}
}
