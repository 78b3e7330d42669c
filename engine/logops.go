package engine

import (
	"encoding/binary"
	"fmt"
)

// Log records. Each committed write batch adds one log record (type
// logBatch) to its collection's log, in the same Pebble batch as the record
// changes. Its payload lists what the batch touched (little-endian):
//
//	+-----------+------------------------------------------------+
//	| count u32 | count x ( op u8 | key u64 | id len u16 | id )  |
//	+-----------+------------------------------------------------+
//
// op is opUpsert or opDelete and key the record's index key at the time.
// The stored records are the source of truth: replay re-reads each touched
// ID and makes the index agree with it (add the stored vector under its
// key, and drop the logged key if the record is gone or has another key),
// so replay is idempotent and independent of the order in which concurrent
// batches committed.

const logBatch = 1

const (
	opUpsert = 1
	opDelete = 2
)

type logOp struct {
	op  uint8
	key uint64
	id  string
}

func encodeOps(ops []logOp) []byte {
	n := 4
	for _, o := range ops {
		n += 1 + 8 + 2 + len(o.id)
	}
	b := make([]byte, 0, n)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ops)))
	for _, o := range ops {
		b = append(b, o.op)
		b = binary.LittleEndian.AppendUint64(b, o.key)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(o.id)))
		b = append(b, o.id...)
	}
	return b
}

// decodeOps parses a payload; every length is checked against the bytes
// present.
func decodeOps(b []byte) ([]logOp, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("log payload of %d bytes", len(b))
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(n)*11 > uint64(len(b)) {
		return nil, fmt.Errorf("log payload claims %d ops in %d bytes", n, len(b))
	}
	ops := make([]logOp, 0, n)
	for i := uint32(0); i < n; i++ {
		if len(b) < 11 {
			return nil, fmt.Errorf("log op %d truncated", i)
		}
		o := logOp{op: b[0], key: binary.LittleEndian.Uint64(b[1:9])}
		l := int(binary.LittleEndian.Uint16(b[9:11]))
		b = b[11:]
		if l > len(b) || (o.op != opUpsert && o.op != opDelete) {
			return nil, fmt.Errorf("log op %d malformed", i)
		}
		o.id = string(b[:l])
		b = b[l:]
		ops = append(ops, o)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d trailing bytes in log payload", len(b))
	}
	return ops, nil
}
