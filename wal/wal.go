// Package wal keeps a logical log: a sequence-numbered list of opaque
// records stored under a key prefix of a Pebble database that the caller
// owns. A record is added to the caller's batch, so it commits atomically
// with whatever else the batch changes; the log knows sequence numbers and
// bytes, not what a record means.
//
// # Keys
//
// Record n is stored under prefix + n as 8 big-endian bytes, so Pebble's
// key order is sequence order. The key that is the prefix alone holds the
// floor: the highest sequence number ever truncated, so that the last
// sequence number survives reopen even when the whole log has been
// truncated.
//
// # Record framing
//
// Every value is framed (integers little-endian):
//
//	+-----------+--------+--------------+--------------+----------------+
//	| version   | type   | length       | CRC-32C      | payload        |
//	| 1 byte =1 | 1 byte | 4 bytes, u32 | 4 bytes, u32 | length bytes   |
//	+-----------+--------+--------------+--------------+----------------+
//
// The checksum (Castagnoli) covers the sequence number (as in the key), the
// version, the type, the length and the payload, so a record that is torn,
// flipped or moved under another key is detected. Replay reports such a
// record as a *CorruptionError naming its sequence number; it never panics
// and never allocates more than the stored value's size.
//
// # Concurrency
//
// A Log is safe for concurrent use by multiple goroutines. Append hands out
// sequence numbers atomically; batches that commit in a different order
// leave the log in key order regardless, and a batch that never commits
// leaves a gap, which Replay skips.
package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// Version is the framing version written by Append.
const Version = 1

// headerSize is the framing before the payload.
const headerSize = 10

// MaxPayload bounds one record's payload (64 MiB).
const MaxPayload = 64 << 20

var (
	// ErrCorrupt is matched (errors.Is) by every *CorruptionError.
	ErrCorrupt = errors.New("wal: corrupt record")
	// ErrTooLarge reports a payload over MaxPayload.
	ErrTooLarge = errors.New("wal: record too large")
	// ErrBadPrefix reports an empty key prefix.
	ErrBadPrefix = errors.New("wal: empty key prefix")
)

// CorruptionError describes a record that failed validation.
type CorruptionError struct {
	Seq    uint64 // the record's sequence number (0 if the key itself is bad)
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corrupt record %d: %s", e.Seq, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// IsCorruption reports whether err is or wraps a corruption error.
func IsCorruption(err error) bool { return errors.Is(err, ErrCorrupt) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Record is one log entry. Payload is only valid during the Replay callback
// that receives it; copy it to keep it.
type Record struct {
	Seq     uint64
	Type    uint8
	Payload []byte
}

// Log is a logical log under a key prefix of a Pebble database. It is safe
// for concurrent use by multiple goroutines (see the package doc for the
// order of sequence numbers under concurrent appends).
type Log struct {
	db     *pebble.DB
	prefix []byte
	last   atomic.Uint64 // the last sequence number handed out
}

// Open returns the log stored under prefix in db, finding its last sequence
// number. The caller keeps ownership of db and must not close it while the
// log is in use; no other keys may start with prefix.
func Open(db *pebble.DB, prefix []byte) (*Log, error) {
	if len(prefix) == 0 {
		return nil, ErrBadPrefix
	}
	l := &Log{db: db, prefix: bytes.Clone(prefix)}
	floor, err := l.floor()
	if err != nil {
		return nil, err
	}
	l.last.Store(floor)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: l.key(0), UpperBound: l.upper()})
	if err != nil {
		return nil, fmt.Errorf("wal: open iterator: %w", err)
	}
	defer it.Close()
	if it.Last() {
		seq, err := l.seqOf(it.Key())
		if err != nil {
			return nil, err
		}
		l.last.Store(max(floor, seq))
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("wal: find last record: %w", err)
	}
	return l, nil
}

// LastSeq returns the last sequence number handed out by Append (or found
// on Open). Records up to it may not all be committed yet.
func (l *Log) LastSeq() uint64 { return l.last.Load() }

// Append frames payload as a record of type typ, adds it to b under the
// next sequence number and returns that number. The record is durable when
// b commits (with Sync); if b is discarded, the number is simply never used.
// payload is copied into b and may be reused.
func (l *Log) Append(b *pebble.Batch, typ uint8, payload []byte) (uint64, error) {
	if len(payload) > MaxPayload {
		return 0, fmt.Errorf("%w: %d bytes, max %d", ErrTooLarge, len(payload), MaxPayload)
	}
	seq := l.last.Add(1)
	op := b.SetDeferred(len(l.prefix)+8, headerSize+len(payload))
	copy(op.Key, l.key(seq))
	encode(op.Value, seq, typ, payload)
	if err := op.Finish(); err != nil {
		return 0, fmt.Errorf("wal: append %d: %w", seq, err)
	}
	return seq, nil
}

// encode frames a record into dst, which has headerSize+len(payload) bytes.
func encode(dst []byte, seq uint64, typ uint8, payload []byte) {
	dst[0] = Version
	dst[1] = typ
	binary.LittleEndian.PutUint32(dst[2:6], uint32(len(payload)))
	copy(dst[headerSize:], payload)
	binary.LittleEndian.PutUint32(dst[6:10], checksum(seq, dst[:6], dst[headerSize:]))
}

func checksum(seq uint64, head, payload []byte) uint32 {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	c := crc32.Update(0, castagnoli, s[:])
	c = crc32.Update(c, castagnoli, head)
	return crc32.Update(c, castagnoli, payload)
}

// Decode validates a stored value as the record with sequence number seq.
// The returned payload aliases value.
func Decode(seq uint64, value []byte) (Record, error) {
	if len(value) < headerSize {
		return Record{}, &CorruptionError{seq, fmt.Sprintf("%d bytes, shorter than the %d-byte header", len(value), headerSize)}
	}
	if value[0] != Version {
		return Record{}, &CorruptionError{seq, fmt.Sprintf("unknown version %d", value[0])}
	}
	n := binary.LittleEndian.Uint32(value[2:6])
	if uint64(n) != uint64(len(value)-headerSize) {
		return Record{}, &CorruptionError{seq, fmt.Sprintf("length says %d payload bytes, %d stored (torn)", n, len(value)-headerSize)}
	}
	if got, want := binary.LittleEndian.Uint32(value[6:10]), checksum(seq, value[:6], value[headerSize:]); got != want {
		return Record{}, &CorruptionError{seq, fmt.Sprintf("checksum %08x, computed %08x", got, want)}
	}
	return Record{Seq: seq, Type: value[1], Payload: value[headerSize:]}, nil
}

// Replay calls fn for every committed record with a sequence number of at
// least from, in order, until fn returns an error (which Replay returns) or
// the log ends. A corrupt record stops the replay with a *CorruptionError.
// It reads a consistent snapshot of the log.
func (l *Log) Replay(from uint64, fn func(Record) error) error {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: l.key(max(from, 1)), UpperBound: l.upper()})
	if err != nil {
		return fmt.Errorf("wal: replay iterator: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		seq, err := l.seqOf(it.Key())
		if err != nil {
			return err
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("wal: read record %d: %w", seq, err)
		}
		rec, err := Decode(seq, v)
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("wal: replay: %w", err)
	}
	return nil
}

// Count returns the number of stored records with a sequence number of at
// least from. It reads every key: O(records).
func (l *Log) Count(from uint64) (int, error) {
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: l.key(max(from, 1)), UpperBound: l.upper()})
	if err != nil {
		return 0, fmt.Errorf("wal: count iterator: %w", err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

// Truncate deletes every record with a sequence number up to and including
// upTo, with one range deletion, and raises the stored floor so LastSeq
// survives reopen. It commits with opts (nil means pebble.Sync).
func (l *Log) Truncate(upTo uint64, opts *pebble.WriteOptions) error {
	if opts == nil {
		opts = pebble.Sync
	}
	floor, err := l.floor()
	if err != nil {
		return err
	}
	if upTo <= floor {
		return nil
	}
	b := l.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(l.key(0), l.key(upTo+1), nil); err != nil {
		return fmt.Errorf("wal: truncate: %w", err)
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], upTo)
	if err := b.Set(l.prefix, v[:], nil); err != nil {
		return fmt.Errorf("wal: truncate: %w", err)
	}
	if err := b.Commit(opts); err != nil {
		return fmt.Errorf("wal: truncate to %d: %w", upTo, err)
	}
	return nil
}

func (l *Log) floor() (uint64, error) {
	v, closer, err := l.db.Get(l.prefix)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("wal: read floor: %w", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, &CorruptionError{0, fmt.Sprintf("floor value has %d bytes, want 8", len(v))}
	}
	return binary.BigEndian.Uint64(v), nil
}

// key returns prefix + seq (8 bytes, big-endian).
func (l *Log) key(seq uint64) []byte {
	k := make([]byte, len(l.prefix)+8)
	copy(k, l.prefix)
	binary.BigEndian.PutUint64(k[len(l.prefix):], seq)
	return k
}

// upper returns the first key after every record key.
func (l *Log) upper() []byte {
	k := make([]byte, len(l.prefix)+9)
	copy(k, l.prefix)
	for i := len(l.prefix); i < len(k); i++ {
		k[i] = 0xff
	}
	return k
}

func (l *Log) seqOf(key []byte) (uint64, error) {
	if len(key) != len(l.prefix)+8 || !bytes.HasPrefix(key, l.prefix) {
		return 0, &CorruptionError{0, fmt.Sprintf("malformed key %x", key)}
	}
	return binary.BigEndian.Uint64(key[len(l.prefix):]), nil
}
