package wal_test

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mnemodb/mnemo/wal"
)

// Example appends two records in the batches of the changes they log,
// replays them, and truncates the first.
func Example() {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	log, err := wal.Open(db, []byte("log/"))
	if err != nil {
		panic(err)
	}
	for _, change := range []string{"set a=1", "set b=2"} {
		b := db.NewBatch()
		b.Set([]byte("data/"+change[4:5]), []byte(change[6:]), nil) // the change itself
		if _, err := log.Append(b, 1, []byte(change)); err != nil { // and its log record, atomically
			panic(err)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			panic(err)
		}
		b.Close()
	}
	err = log.Replay(1, func(r wal.Record) error {
		fmt.Printf("%d: %s\n", r.Seq, r.Payload)
		return nil
	})
	if err != nil {
		panic(err)
	}
	if err := log.Truncate(1, pebble.Sync); err != nil {
		panic(err)
	}
	n, err := log.Count(1)
	if err != nil {
		panic(err)
	}
	fmt.Println("after truncating 1:", n, "record, last seq", log.LastSeq())
	// Output:
	// 1: set a=1
	// 2: set b=2
	// after truncating 1: 1 record, last seq 2
}
