package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
)

// decodeMetadata parses stored metadata JSON; numbers become float64.
func decodeMetadata(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Stored record encoding (little-endian), the value of a document key:
//
//	+---------+--------+---------+-------------------+-------------+
//	| version | key    | dim     | vector            | content len |
//	| u8 = 1  | u64    | u32     | dim x f32         | u32         |
//	+---------+--------+---------+-------------------+-------------+
//	| content | metadata len u32 | metadata (JSON)   | CRC-32C u32 |
//	+---------+------------------+-------------------+-------------+
//
// key is the record's dense index key; the checksum covers every byte
// before it. The record's ID is the document key's suffix, not stored here.
const recordVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeRecord(key uint64, vec []float32, content string, meta []byte) []byte {
	n := 1 + 8 + 4 + 4*len(vec) + 4 + len(content) + 4 + len(meta) + 4
	b := make([]byte, 0, n)
	b = append(b, recordVersion)
	b = binary.LittleEndian.AppendUint64(b, key)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vec)))
	for _, x := range vec {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(content)))
	b = append(b, content...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// storedRecord is a decoded document value.
type storedRecord struct {
	key     uint64
	dim     int
	vector  []float32 // nil unless decoded with the vector
	content string
	meta    []byte // JSON
}

// decodeRecord validates and decodes a stored value; every length is
// checked against the bytes present before anything is allocated.
func decodeRecord(b []byte) (storedRecord, error) { return decodeRecordOpt(b, true) }

// decodeRecordOpt is decodeRecord that skips materialising the vector
// (still checksummed and bounds-checked) when withVector is false.
func decodeRecordOpt(b []byte, withVector bool) (storedRecord, error) {
	var r storedRecord
	if len(b) < 1+8+4+4+4+4 {
		return r, fmt.Errorf("record of %d bytes is too short", len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return r, fmt.Errorf("record checksum mismatch")
	}
	if body[0] != recordVersion {
		return r, fmt.Errorf("unknown record version %d", body[0])
	}
	r.key = binary.LittleEndian.Uint64(body[1:9])
	rest := body[9:]
	dim := binary.LittleEndian.Uint32(rest[:4])
	rest = rest[4:]
	if uint64(dim)*4 > uint64(len(rest)) {
		return r, fmt.Errorf("record claims dimension %d in %d bytes", dim, len(rest))
	}
	if withVector {
		r.vector = make([]float32, dim)
		for i := range r.vector {
			r.vector[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[4*i:]))
		}
	}
	r.dim = int(dim)
	rest = rest[4*dim:]
	content, rest, err := lengthPrefixed(rest, "content")
	if err != nil {
		return r, err
	}
	meta, rest, err := lengthPrefixed(rest, "metadata")
	if err != nil {
		return r, err
	}
	if len(rest) != 0 {
		return r, fmt.Errorf("%d trailing bytes in record", len(rest))
	}
	r.content = string(content)
	r.meta = bytes.Clone(meta)
	return r, nil
}

func lengthPrefixed(b []byte, what string) (field, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("record truncated before its %s length", what)
	}
	n := binary.LittleEndian.Uint32(b[:4])
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("record claims %d bytes of %s, %d remain", n, what, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}

// cloneMeta deep-copies metadata as decodeMetadata produces it (maps, lists
// and scalars), so a caller can never reach the collection's in-memory copy.
func cloneMeta(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMeta(x)
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = cloneValue(e)
		}
		return c
	}
	return v
}
