package window

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/internal/memtest"
)

// TestSetMessagesPowerLoss cuts the power (Pebble's crashable in-memory
// filesystem, keeping only what was synced) before each store call that
// SetMessages and Clear make after writing the new messages, and reopens
// the session: it holds the old messages or the new ones, never the new
// ones followed by the old tail.
func TestSetMessagesPowerLoss(t *testing.T) {
	ctx := context.Background()
	old := make([]Message, 10)
	for i := range old {
		old[i] = Message{Role: []Role{User, Assistant}[i%2], Content: fmt.Sprintf("old message %d", i)}
	}
	for _, tc := range []struct {
		name string
		msgs []Message
	}{
		{"shorter", []Message{{Role: User, Content: "new 0"}, {Role: Assistant, Content: "new 1"}, {Role: User, Content: "new 2"}}},
		{"clear", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			db, err := engine.Open("db", &engine.Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			var clones []*vfs.MemFS
			armed := false
			s := &memtest.Faulty{Store: db.Store(), Hook: func(_ context.Context, op, name string) error {
				if armed && (op == "upsert" || op == "delete") {
					clones = append(clones, fs.CrashClone(vfs.CrashCloneCfg{}))
				}
				return nil
			}}
			w, err := NewStored(ctx, s, "s", 1000, &Options{Recall: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range old {
				mustRecord(t, w, m)
			}
			armed = true
			if err := w.SetMessages(ctx, tc.msgs); err != nil {
				t.Fatal(err)
			}
			armed = false
			clones = append(clones, fs.CrashClone(vfs.CrashCloneCfg{}))
			w.Close()
			db.Close()
			sawNew := false
			for i, crashed := range clones {
				db, err := engine.Open("db", &engine.Options{FS: crashed})
				if err != nil {
					t.Fatalf("clone %d: %v", i, err)
				}
				w, err := NewStored(context.Background(), db.Store(), "s", 1000, &Options{Recall: true})
				if err != nil {
					t.Fatalf("clone %d: %v", i, err)
				}
				h, _ := w.History(ctx)
				switch {
				case sameContents(h, old):
				case sameContents(h, tc.msgs):
					sawNew = true
				default:
					t.Fatalf("clone %d (of %d cuts): history %v is neither the old messages nor the new", i, len(clones), contents(h))
				}
				checkRecall(t, w)
				w.Close()
				// The next open sees the same (the trim was finished).
				w, _ = NewStored(context.Background(), db.Store(), "s", 1000, nil)
				if h2, _ := w.History(ctx); !sameContents(h2, h) {
					t.Fatalf("clone %d: the second open shows %v, the first %v", i, contents(h2), contents(h))
				}
				w.Close()
				db.Close()
			}
			if !sawNew {
				t.Fatal("not even the last clone holds the new messages")
			}
			t.Logf("%d cuts, each reopened whole", len(clones))
		})
	}
}

func sameContents(a, b []Message) bool {
	return contents(a) == contents(b) && len(a) == len(b)
}
