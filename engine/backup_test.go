package engine

import (
	"github.com/mnemodb/mnemo"

	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// backupOp is op i of writer w: an upsert of three records over a cycle
// of keys, or every fifth op a delete of the keys op i-1 wrote.
func backupOp(w, i int) (upsert []mnemo.Record, del []string) {
	keys := func(i int) []string {
		return []string{fmt.Sprintf("w%d-%d-a", w, i%7), fmt.Sprintf("w%d-%d-b", w, i%7), fmt.Sprintf("w%d-%d-c", w, i%7)}
	}
	if i%5 == 4 {
		return nil, keys(i - 1)
	}
	for j, id := range keys(i) {
		r := crashRecord(w*100000+i, j)
		r.ID = id
		r.Metadata = map[string]any{"w": float64(w), "op": float64(i)}
		upsert = append(upsert, r)
	}
	return upsert, nil
}

// backupState is writer w's records after its first n ops.
func backupState(w, n int) map[string]mnemo.Record {
	state := map[string]mnemo.Record{}
	for i := 0; i < n; i++ {
		up, del := backupOp(w, i)
		for _, r := range up {
			state[r.ID] = r
		}
		for _, id := range del {
			delete(state, id)
		}
	}
	return state
}

// TestBackupWhileWriting backs up while four goroutines upsert and delete,
// then opens the backup: for each writer it must hold exactly the state
// after some number of that writer's ops, at least all acknowledged before
// Backup was called (so no batch is in it in part, and nothing
// acknowledged before is missing); it opens from its checkpoint, and
// Verify finds nothing.
func TestBackupWhileWriting(t *testing.T) {
	const writers = 4
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, &Options{CheckpointEvery: 50})
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	var acked [writers]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				up, del := backupOp(w, i)
				var err error
				if up != nil {
					_, err = c.Upsert(ctx, up...)
				} else {
					_, err = c.Delete(ctx, del...)
				}
				if err != nil {
					t.Errorf("writer %d op %d: %v", w, i, err)
					return
				}
				acked[w].Store(int64(i + 1))
			}
		}()
	}
	for acked[0].Load() < 100 {
		time.Sleep(time.Millisecond) // the writers get going, a background checkpoint happens
	}
	var before [writers]int
	for w := range writers {
		before[w] = int(acked[w].Load())
	}
	backupDir := filepath.Join(t.TempDir(), "backup")
	err := db.Backup(ctx, backupDir)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var after [writers]int
	for w := range writers {
		after[w] = int(acked[w].Load())
	}
	db.Close()

	b := mustOpen(t, backupDir, &Options{MustExist: true})
	defer b.Close()
	if problems, err := b.Verify(ctx); err != nil || len(problems) > 0 {
		t.Fatalf("verify the backup: %v %v", problems, err)
	}
	bc, err := b.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := bc.Stats(ctx); st.OpenedBy != "checkpoint+replay" {
		t.Fatalf("backup opened by %s (%s), want checkpoint+replay", st.OpenedBy, st.RebuildReason)
	}
	got := map[int]map[string]mnemo.Record{}
	page, after0 := []mnemo.Record(nil), ""
	for {
		page, after0, err = bc.Scan(ctx, after0, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			w := int(r.Metadata["w"].(float64))
			if got[w] == nil {
				got[w] = map[string]mnemo.Record{}
			}
			got[w][r.ID] = r
		}
		if after0 == "" {
			break
		}
	}
	for w := range writers {
		found := -1
		for n := before[w]; n <= after[w] && found < 0; n++ {
			if sameState(got[w], backupState(w, n)) {
				found = n
			}
		}
		if found < 0 {
			t.Fatalf("writer %d: the backup matches no state after %d..%d ops", w, before[w], after[w])
		}
		t.Logf("writer %d: backup holds its first %d ops (%d acknowledged before Backup, %d after)", w, found, before[w], after[w])
	}
}

func sameState(got, want map[string]mnemo.Record) bool {
	if len(got) != len(want) {
		return false
	}
	for id, r := range want {
		if g, ok := got[id]; !ok || !sameRecord(g, r) {
			return false
		}
	}
	return true
}

// TestBackupBadTargets: a backup refuses a directory that is not empty and
// reports a read-only filesystem; a backup cut short (its marker still
// there) never opens as a database.
func TestBackupBadTargets(t *testing.T) {
	root := t.TempDir()
	db := mustOpen(t, filepath.Join(root, "db"), nil)
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	if _, err := c.Upsert(ctx, crashBatchRecords(0)...); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644)
	if err := db.Backup(ctx, full); !errors.Is(err, ErrBackupTarget) {
		t.Fatalf("backup into a non-empty directory: %v, want ErrBackupTarget", err)
	}
	if err := db.Backup(ctx, ""); err == nil {
		t.Fatal("backup into an empty path succeeded")
	}
	// An empty directory is fine, and so is the backup of a backup.
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	if err := db.Backup(ctx, empty); err != nil {
		t.Fatalf("backup into an empty directory: %v", err)
	}
	// A backup cut short keeps its marker: Open refuses it.
	if err := os.WriteFile(filepath.Join(empty, backupMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(empty, nil); !errors.Is(err, ErrNotDatabase) {
		t.Fatalf("open of a backup cut short: %v, want ErrNotDatabase", err)
	}
	os.Remove(filepath.Join(empty, backupMarker))
	b := mustOpen(t, empty, &Options{MustExist: true})
	defer b.Close()
	bc, _ := b.Collection("c")
	verifyBatches(t, bc, 0)
}

// TestBackupRetry: a Backup whose context is done removes what it wrote
// (the directory too, when it made it), so a retry into the same target
// works; so does a retry into a backup a crash cut short, which Backup
// clears first.
func TestBackupRetry(t *testing.T) {
	root := t.TempDir()
	db := mustOpen(t, filepath.Join(root, "db"), nil)
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	if _, err := c.Upsert(ctx, crashBatchRecords(0)...); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(root, "b")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := db.Backup(cancelled, target); !errors.Is(err, context.Canceled) {
		t.Fatalf("Backup with a cancelled context: %v", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a cancelled Backup left %s behind: %v", target, err)
	}
	// A backup cut short by a crash: the marker and part of a copy.
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, backupMarker), nil, 0o644)
	os.WriteFile(filepath.Join(target, "000004.sst"), []byte("part"), 0o644)
	os.Mkdir(filepath.Join(target, checkpointDir), 0o755)
	if err := db.Backup(ctx, target); err != nil {
		t.Fatalf("Backup into a backup cut short: %v", err)
	}
	b := mustOpen(t, target, &Options{MustExist: true})
	defer b.Close()
	bc, _ := b.Collection("c")
	verifyBatches(t, bc, 0)
}

// dirBytes sums the sizes of the files under dir but Pebble's logs, which
// it keeps for reuse (a few files of about 4 MiB whatever the data).
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) != ".log" {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestCompactGivesSpaceBack: after most records are deleted, Compact
// leaves the database smaller than it was before the deletes, and the
// records that remain are intact.
func TestCompactGivesSpaceBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db := mustOpen(t, dir, nil)
	defer db.Close()
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	for n := 0; n < 100; n++ {
		if _, err := c.Upsert(ctx, spaceRecords(n)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	full := dirBytes(t, dir)
	for n := 10; n < 100; n++ {
		var ids []string
		for _, r := range spaceRecords(n) {
			ids = append(ids, r.ID)
		}
		if _, err := c.Delete(ctx, ids...); err != nil {
			t.Fatal(err)
		}
	}
	deleted := dirBytes(t, dir)
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	// Pebble deletes the tables a compaction replaced in the background,
	// soon after: wait for that, up to ten seconds.
	compacted := dirBytes(t, dir)
	for wait := 0; compacted >= full/2 && wait < 100; wait++ {
		time.Sleep(100 * time.Millisecond)
		compacted = dirBytes(t, dir)
	}
	t.Logf("bytes on disk but logs: %d full, %d after deleting 90%%, %d after Compact", full, deleted, compacted)
	if compacted >= full/2 {
		t.Fatalf("Compact left %d bytes of %d after 90%% of the records were deleted", compacted, full)
	}
	checkSpaceRecords(t, c, 10)
}

// backupChild backs the database in dir up into dir-b0, dir-b1, ...
// forever, writing between backups; the parent kills it.
func backupChild(dir string) {
	db, err := Open(dir, nil)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	c, _ := db.Collection("c")
	for i := 0; ; i++ {
		if err := db.Backup(ctx, fmt.Sprintf("%s-b%d", dir, i)); err != nil {
			fmt.Println("error", err)
			return
		}
		if _, err := c.Upsert(ctx, crashBatchRecords(1000+i)...); err != nil {
			fmt.Println("error", err)
			return
		}
	}
}

// TestBackupKilled kills a process in the middle of backups with SIGKILL:
// every backup directory left behind either opens with every record the
// database had before the backups started and passes Verify, or is
// refused as a backup cut short. None opens as a partial database.
func TestBackupKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "db")
	db := mustOpen(t, dir, nil)
	c := mustCollection(t, db, "c", mnemo.CollectionConfig{Dimension: crashDim})
	for n := 0; n < 40; n++ {
		if _, err := c.Upsert(ctx, crashBatchRecords(n)...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	complete, cut := 0, 0
	for kill := 0; kill < 4; kill++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "MNEMO_BACKUP_CHILD="+dir)
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(100+kill*70) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		if strings.Contains(out.String(), "error") {
			t.Fatalf("child: %s", out.String())
		}
		backups, _ := filepath.Glob(dir + "-b*")
		for _, b := range backups {
			bdb, err := Open(b, &Options{MustExist: true})
			if err != nil {
				if !errors.Is(err, ErrNotDatabase) && !errors.Is(err, ErrNoDatabase) {
					t.Fatalf("%s: %v, want a backup cut short to be refused", b, err)
				}
				cut++
			} else {
				bc, err := bdb.Collection("c")
				if err != nil {
					t.Fatalf("%s opened without its collection: %v", b, err)
				}
				verifyBatches(t, bc, 39)
				if problems, err := bdb.Verify(ctx); err != nil || len(problems) > 0 {
					t.Fatalf("%s: verify: %v %v", b, problems, err)
				}
				bdb.Close()
				complete++
			}
			os.RemoveAll(b)
		}
	}
	t.Logf("%d complete backups opened, %d cut short refused", complete, cut)
	if cut == 0 {
		t.Log("no kill landed inside a backup this time")
	}
}
