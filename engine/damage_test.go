package engine

import (
	"github.com/mnemodb/mnemo"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The damage matrix: for every kind of file in a database directory,
// delete it, cut it to half its length, or flip a byte in its middle, then
// Open and Verify. Every cell must end in one of two ways: the database
// opens with every acknowledged write intact and Verify finds nothing
// (recovered), or Open or Verify reports a clear error. Never a panic,
// never an empty database over the old files, never a record that differs
// from what was acknowledged. The outcome table is logged
// (go test -run TestDamageMatrix -v ./engine/) and quoted in README.

// damageKinds names each kind of file by a pattern over its path relative
// to the database directory.
var damageKinds = []struct {
	kind  string
	match func(rel string) bool
}{
	{"Pebble table (*.sst)", func(r string) bool { return strings.HasSuffix(r, ".sst") }},
	{"Pebble log (*.log, the live one)", func(r string) bool { return strings.HasSuffix(r, ".log") }},
	{"Pebble MANIFEST-*", func(r string) bool { return strings.HasPrefix(r, "MANIFEST-") }},
	{"Pebble marker.manifest.*", func(r string) bool { return strings.HasPrefix(r, "marker.manifest.") }},
	{"Pebble marker.format-version.*", func(r string) bool { return strings.HasPrefix(r, "marker.format-version.") }},
	{"Pebble OPTIONS-*", func(r string) bool { return strings.HasPrefix(r, "OPTIONS-") }},
	{"Pebble LOCK", func(r string) bool { return r == "LOCK" }},
	{"identity (MNEMO)", func(r string) bool { return r == identityFile }},
	{"sequence mark (SEQMARK)", func(r string) bool { return r == seqMarkFile }},
	{"index checkpoint (checkpoints/*)", func(r string) bool { return strings.HasPrefix(r, checkpointDir+"/") }},
}

var damages = []struct {
	name  string
	apply func(path string) error
}{
	{"delete", os.Remove},
	{"truncate to half", func(p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		return os.Truncate(p, fi.Size()/2)
	}},
	{"flip a middle byte", func(p string) error {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b[len(b)/2] ^= 0x5a
		return os.WriteFile(p, b, 0o644)
	}},
}

// damageSeed builds a database that has every kind of file, with writes
// both in Pebble's tables and only in its live log, and returns a copy of
// its directory taken while it is open (as a crash would leave it) and the
// acknowledged records.
func damageSeed(t *testing.T) (string, map[string]mnemo.Record) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, &Options{CheckpointEvery: -1})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	model := map[string]mnemo.Record{}
	upsert := func(n int) {
		recs := crashBatchRecords(n)
		if _, err := c.Upsert(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			model[r.ID] = r
		}
	}
	for n := 0; n < 30; n++ {
		upsert(n)
	}
	db.Close() // a checkpoint, and Pebble's tables
	db = mustOpen(t, dir, &Options{CheckpointEvery: -1})
	defer db.Close()
	c, _ = db.Collection("c")
	for n := 30; n < 50; n++ {
		upsert(n) // only in Pebble's log
	}
	var gone []string
	for id := range model {
		if len(gone) < 40 && strings.HasSuffix(id, "-1") {
			gone = append(gone, id)
		}
	}
	if _, err := c.Delete(ctx, gone...); err != nil {
		t.Fatal(err)
	}
	for _, id := range gone {
		delete(model, id)
	}
	image := filepath.Join(t.TempDir(), "image")
	copyDir(t, dir, image)
	return image, model
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if d.Type()&fs.ModeSocket != 0 {
			return nil // live access's socket: no data, as in a crash image
		}
		src, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // an open database removed it (an old OPTIONS file): as in a crash image
		}
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := os.Create(filepath.Join(to, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			return err
		}
		return dst.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pickFile returns the file of a kind to damage: the newest by name (the
// live log, the current manifest), or "" when the image has none.
func pickFile(t *testing.T, image string, match func(string) bool) string {
	t.Helper()
	var found []string
	filepath.WalkDir(image, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(image, p)
			if match(filepath.ToSlash(rel)) {
				found = append(found, rel)
			}
		}
		return nil
	})
	if len(found) == 0 {
		return ""
	}
	slices.Sort(found)
	return found[len(found)-1]
}

func TestDamageMatrix(t *testing.T) {
	image, model := damageSeed(t)
	var table strings.Builder
	fmt.Fprintf(&table, "| file | %s |\n|---|---|---|---|\n", strings.Join([]string{damages[0].name, damages[1].name, damages[2].name}, " | "))
	for _, k := range damageKinds {
		rel := pickFile(t, image, k.match)
		if rel == "" {
			t.Fatalf("the seed database has no %s", k.kind)
		}
		cells := []string{}
		for _, dmg := range damages {
			name := k.kind + "/" + dmg.name
			dir := filepath.Join(t.TempDir(), "db")
			copyDir(t, image, dir)
			path := filepath.Join(dir, rel)
			if fi, _ := os.Stat(path); fi.Size() == 0 && dmg.name != "delete" {
				cells = append(cells, "n/a (empty file)")
				continue
			}
			if err := dmg.apply(path); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			cells = append(cells, damageOutcome(t, name, dir, model))
		}
		fmt.Fprintf(&table, "| %s | %s |\n", k.kind, strings.Join(cells, " | "))
	}
	t.Logf("damage matrix:\n%s", table.String())
}

// damageOutcome opens a damaged directory and says how it ended, failing
// the test when it ended in anything but recovery or a clear error.
func damageOutcome(t *testing.T, name, dir string, model map[string]mnemo.Record) string {
	db, err := Open(dir, nil)
	if err != nil {
		if err.Error() == "" {
			t.Errorf("%s: Open failed with an empty message", name)
		}
		if !IsCorruption(err) {
			t.Errorf("%s: Open failed, but not with a corruption error: %v", name, err)
		}
		t.Logf("%s: %v", name, err)
		return "Open: corruption error"
	}
	defer db.Close()
	problems, err := db.Verify(ctx)
	if err != nil || len(problems) > 0 {
		t.Logf("%s: verify: %v %v", name, problems, err)
		if err == nil && !slices.ContainsFunc(problems, func(p string) bool { return p != "" }) {
			t.Errorf("%s: verify reported empty problems", name)
		}
	}
	c, err := db.Collection("c")
	if err != nil {
		t.Errorf("%s: opened, but the collection is gone: %v", name, err)
		return "LOST the collection"
	}
	n := c.Count()
	lost := 0
	for id, want := range model {
		got, ok, err := c.Get(ctx, id)
		if err != nil {
			t.Errorf("%s: opened, then get %s: %v", name, id, err)
			return "Get: error"
		}
		if !ok {
			lost++
			continue
		}
		if !sameRecord(got, want) {
			t.Errorf("%s: record %s served with other data", name, id)
			return "WRONG DATA"
		}
	}
	if lost > 0 || n != len(model) {
		t.Errorf("%s: opened with %d of %d acknowledged records missing and %d records in all", name, lost, len(model), n)
		return fmt.Sprintf("LOST %d records", lost)
	}
	st, _ := c.Stats(ctx)
	how := "recovered, nothing lost"
	if st.OpenedBy == "rebuild" {
		how += " (index rebuilt)"
	}
	return how
}

// TestLostLogDetected: the writes Pebble's log alone holds (a drop, a
// delete, a new collection) must not vanish silently when the log is cut
// or removed: Open fails with a corruption error.
func TestLostLogDetected(t *testing.T) {
	cases := []struct {
		name string
		lose func(t *testing.T, db *DB) // the write that only the log holds
	}{
		{"drop", func(t *testing.T, db *DB) {
			if err := db.DropCollection(ctx, "scratch"); err != nil {
				t.Fatal(err)
			}
		}},
		{"delete", func(t *testing.T, db *DB) {
			c, _ := db.Collection("main")
			if n, err := c.Delete(ctx, crashRecord(0, 0).ID); n != 1 || err != nil {
				t.Fatal(n, err)
			}
		}},
		{"create", func(t *testing.T, db *DB) {
			mustCollection(t, db, "new", mnemo.CollectionConfig{Dimension: crashDim})
		}},
	}
	for _, tc := range cases {
		for _, how := range []string{"cut", "removed"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "db")
				db := mustOpen(t, dir, nil)
				for _, name := range []string{"main", "scratch"} {
					c := mustCollection(t, db, name, mnemo.CollectionConfig{Dimension: crashDim})
					if _, err := c.Upsert(ctx, crashBatchRecords(0)...); err != nil {
						t.Fatal(err)
					}
				}
				db.Close() // everything in Pebble's tables
				db = mustOpen(t, dir, nil)
				tc.lose(t, db)
				image := filepath.Join(t.TempDir(), "image")
				copyDir(t, dir, image)
				db.Close()
				log := pickFile(t, image, func(r string) bool { return strings.HasSuffix(r, ".log") })
				var err error
				if how == "cut" {
					err = os.Truncate(filepath.Join(image, log), 0)
				} else {
					err = os.Remove(filepath.Join(image, log))
				}
				if err != nil {
					t.Fatal(err)
				}
				if db, err := Open(image, nil); !IsCorruption(err) {
					if err == nil {
						db.Close()
					}
					t.Fatalf("Open after the log was %s: %v, want a corruption error", how, err)
				}
			})
		}
	}
}
