package engine

import "encoding/binary"

// On-disk layout. Everything lives in one Pebble database; keys start with
// a one-byte tag:
//
//	'c' name                 collection config (JSON), by name
//	'm' "nextcollection"     next collection id, u32 big-endian
//	'd' cid(4) recordID      a record (encoding in record.go)
//	'l' cid(4) seq(8)        the collection's logical log (package wal)
//	'p' cid(4)               the collection's checkpoint descriptor (JSON)
//	'x' cid(4) key(8)        a record's analyzed text, by index key (text.go)
//	's' cid(4)               the collection's next position (sequence.go)
//
// cid is the collection's numeric id, big-endian, so a collection's records
// sort by ID and its keys form contiguous ranges that Drop deletes with
// range deletions. Checkpoint files live beside Pebble's, under
// <dir>/checkpoints/<cid>-<seq>.hnsw (or .flat).

const (
	tagConfig     = 'c'
	tagMeta       = 'm'
	tagRecord     = 'd'
	tagLog        = 'l'
	tagCheckpoint = 'p'
	tagText       = 'x'
	tagSequence   = 's'
)

var keyNextCollection = []byte("mnextcollection")

func configKey(name string) []byte { return append([]byte{tagConfig}, name...) }

func cidPrefix(tag byte, cid uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{tag}, cid)
}

func recordKey(cid uint32, id string) []byte { return append(cidPrefix(tagRecord, cid), id...) }

func textKey(cid uint32, key uint64) []byte {
	return binary.BigEndian.AppendUint64(cidPrefix(tagText, cid), key)
}

func checkpointKey(cid uint32) []byte { return cidPrefix(tagCheckpoint, cid) }

// prefixEnd returns the first key after every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}
