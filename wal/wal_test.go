package wal

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func openMem(t *testing.T, fs vfs.FS) *pebble.DB {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

type quiet struct{}

func (quiet) Infof(string, ...any)         {}
func (quiet) Errorf(string, ...any)        {}
func (quiet) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

func appendOne(t *testing.T, db *pebble.DB, l *Log, typ uint8, payload string) uint64 {
	t.Helper()
	b := db.NewBatch()
	seq, err := l.Append(b, typ, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return seq
}

func collect(t *testing.T, l *Log, from uint64) []Record {
	t.Helper()
	var out []Record
	err := l.Replay(from, func(r Record) error {
		r.Payload = bytes.Clone(r.Payload)
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAppendReplayTruncateReopen(t *testing.T) {
	fs := vfs.NewMem()
	db := openMem(t, fs)
	l, err := Open(db, []byte("log/"))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := Open(db, []byte("other/"))
	appendOne(t, db, other, 9, "elsewhere")
	for i := 1; i <= 5; i++ {
		if seq := appendOne(t, db, l, uint8(i), fmt.Sprint("rec", i)); seq != uint64(i) {
			t.Fatalf("seq %d, want %d", seq, i)
		}
	}
	// A batch that is never committed burns its number and leaves a gap.
	b := db.NewBatch()
	l.Append(b, 1, []byte("lost"))
	b.Close()
	appendOne(t, db, l, 7, "rec7")

	got := collect(t, l, 3)
	want := []string{"3:3:rec3", "4:4:rec4", "5:5:rec5", "7:7:rec7"}
	if fmt.Sprint(fmtRecs(got)) != fmt.Sprint(want) {
		t.Fatalf("replay from 3: %v, want %v", fmtRecs(got), want)
	}
	if n, _ := l.Count(0); n != 6 {
		t.Fatalf("Count = %d, want 6", n)
	}
	if err := l.Truncate(4, nil); err != nil {
		t.Fatal(err)
	}
	if got := fmtRecs(collect(t, l, 0)); fmt.Sprint(got) != "[5:5:rec5 7:7:rec7]" {
		t.Fatalf("after truncate: %v", got)
	}
	if err := l.Truncate(7, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = openMem(t, fs)
	defer db.Close()
	l, _ = Open(db, []byte("log/"))
	if l.LastSeq() != 7 {
		t.Fatalf("LastSeq after full truncate and reopen = %d, want 7", l.LastSeq())
	}
	if seq := appendOne(t, db, l, 1, "after"); seq != 8 {
		t.Fatalf("next seq %d, want 8", seq)
	}
	if got := fmtRecs(collect(t, l, 0)); fmt.Sprint(got) != "[8:1:after]" {
		t.Fatalf("after reopen: %v", got)
	}
	other, _ = Open(db, []byte("other/"))
	if got := fmtRecs(collect(t, other, 0)); fmt.Sprint(got) != "[1:9:elsewhere]" {
		t.Fatalf("other log: %v", got)
	}
}

func fmtRecs(rs []Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%d:%d:%s", r.Seq, r.Type, r.Payload))
	}
	return out
}

func TestCorruptRecords(t *testing.T) {
	good := make([]byte, headerSize+5)
	encode(good, 42, 3, []byte("hello"))
	if r, err := Decode(42, good); err != nil || string(r.Payload) != "hello" || r.Type != 3 {
		t.Fatalf("Decode(good) = %+v, %v", r, err)
	}
	tests := map[string]struct {
		seq uint64
		val []byte
	}{
		"empty":        {42, nil},
		"short header": {42, good[:headerSize-1]},
		"torn payload": {42, good[:len(good)-2]},
		"moved to 43":  {43, good},
		"bad version":  {42, append([]byte{2}, good[1:]...)},
		"long length":  {42, append(append([]byte{}, good...), 0)},
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		tests[fmt.Sprintf("flip byte %d", i)] = struct {
			seq uint64
			val []byte
		}{42, bad}
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(tt.seq, tt.val)
			var ce *CorruptionError
			if !errors.As(err, &ce) || !IsCorruption(err) || ce.Seq != tt.seq {
				t.Fatalf("err = %v, want a corruption error for record %d", err, tt.seq)
			}
		})
	}
}

func TestReplayStopsAtCorruption(t *testing.T) {
	db := openMem(t, vfs.NewMem())
	defer db.Close()
	l, _ := Open(db, []byte("L"))
	for i := 0; i < 3; i++ {
		appendOne(t, db, l, 1, "ok")
	}
	if err := db.Set(l.key(2), []byte{1, 1, 0, 0}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	var seen []uint64
	err := l.Replay(0, func(r Record) error { seen = append(seen, r.Seq); return nil })
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Seq != 2 || fmt.Sprint(seen) != "[1]" {
		t.Fatalf("err %v, seen %v; want corruption at 2 after [1]", err, seen)
	}
	if _, err := Open(db, nil); !errors.Is(err, ErrBadPrefix) {
		t.Fatalf("empty prefix: %v", err)
	}
	b := db.NewBatch()
	defer b.Close()
	if _, err := l.Append(b, 1, make([]byte, MaxPayload+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized payload: %v", err)
	}
}

// FuzzDecode feeds arbitrary bytes to Decode: it must never panic, and
// whatever it accepts must re-encode to the same bytes.
func FuzzDecode(f *testing.F) {
	good := make([]byte, headerSize+3)
	encode(good, 7, 1, []byte("abc"))
	f.Add(uint64(7), good)
	f.Add(uint64(0), []byte{})
	f.Add(uint64(1), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, seq uint64, v []byte) {
		r, err := Decode(seq, v)
		if err != nil {
			if !IsCorruption(err) {
				t.Fatalf("non-corruption error %v", err)
			}
			return
		}
		again := make([]byte, headerSize+len(r.Payload))
		encode(again, seq, r.Type, r.Payload)
		if !bytes.Equal(again, v) {
			t.Fatalf("accepted %x, re-encodes to %x", v, again)
		}
	})
}
