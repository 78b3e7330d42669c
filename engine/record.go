package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"unicode/utf8"
)

// Record is one stored item of a collection.
type Record struct {
	// ID names the record within its collection: 1 to MaxIDLength bytes of
	// valid UTF-8 (ErrInvalidID), without U+0000 (ErrInvalidRecord; Get
	// and Delete still take such an ID, for records stored before it was
	// refused). Upsert assigns a UUID v4 when it is empty.
	ID string
	// Vector is the embedding; its length is the collection's dimension.
	// Under the cosine metric the stored vector is the one given (the index
	// keeps its own normalised copy).
	Vector []float32
	// Content is the text the vector was made from (may be empty).
	Content string
	// Metadata holds JSON-compatible values: strings, numbers, booleans,
	// null, and lists and objects of them, at most MaxMetadataDepth levels
	// deep and MaxMetadataBytes long as JSON. Strings and keys must be
	// valid UTF-8. Other Go values (typed slices and maps, structs) are
	// stored as encoding/json encodes them, which replaces invalid UTF-8
	// in their strings. Reads return metadata as encoding/json decodes it:
	// numbers as float64, lists as []any, objects as map[string]any, and
	// nil for an empty map. Filters match scalar values.
	Metadata map[string]any
}

// Limits on records.
const (
	MaxIDLength      = 512
	MaxContentLength = 16 << 20
	// MaxMetadataBytes bounds the JSON encoding of a record's metadata.
	MaxMetadataBytes = 1 << 20
	// MaxMetadataDepth bounds how deeply metadata nests: the metadata
	// object is level 1 and each object or list inside a level deeper. It
	// also bounds a cyclic value (a map that contains itself), which is
	// refused for nesting too deep.
	MaxMetadataDepth = maxNesting
)

// validate checks a record at the API boundary (the vector is checked by
// the collection, which knows the dimension and metric) and returns its
// metadata encoded as JSON.
func validateRecord(r *Record, name string) ([]byte, error) {
	if err := validateID(r.ID); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if strings.IndexByte(r.ID, 0) >= 0 {
		return nil, fmt.Errorf("%w: %s: id contains U+0000", ErrInvalidRecord, name)
	}
	if len(r.Content) > MaxContentLength {
		return nil, fmt.Errorf("%w: %s: content is %d bytes, max %d", ErrInvalidRecord, name, len(r.Content), MaxContentLength)
	}
	if !utf8.ValidString(r.Content) {
		return nil, fmt.Errorf("%w: %s: content is not valid UTF-8", ErrInvalidRecord, name)
	}
	meta, err := encodeMetadata(r.Metadata)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidRecord, name, err)
	}
	return meta, nil
}

// recordName names record i of a batch in errors: by the ID the caller
// gave, or by its position when the engine assigns the ID (the caller has
// not seen it yet).
func recordName(i int, id string) string {
	if id == "" {
		return fmt.Sprintf("record %d of the batch (no id given)", i)
	}
	return fmt.Sprintf("record %q", id)
}

func validateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty id", ErrInvalidID)
	case len(id) > MaxIDLength:
		return fmt.Errorf("%w: id is %d bytes, max %d", ErrInvalidID, len(id), MaxIDLength)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: id %q is not valid UTF-8", ErrInvalidID, id)
	}
	return nil
}

// encodeMetadata returns the JSON of meta (nil for none), or an error
// naming the first problem's path ("metadata.a.b[3]: ..."). The walk that
// checks it comes first, so that what it refuses (nesting deeper than
// MaxMetadataDepth, more than MaxMetadataBytes, NaN and infinities,
// strings and keys that are not valid UTF-8, which Marshal would silently
// replace) costs no more than the limits allow, whatever meta holds:
// cycles included. What it returns decodes again with decodeMetadata.
func encodeMetadata(meta map[string]any) ([]byte, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	w := metaWalker{path: newJSONPath("metadata", MaxMetadataDepth)}
	if err := w.object(meta, 1); err != nil {
		return nil, err
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("metadata cannot be encoded as JSON: %v", err)
	}
	if len(b) > MaxMetadataBytes {
		return nil, fmt.Errorf("metadata is %d bytes of JSON, max %d", len(b), MaxMetadataBytes)
	}
	return b, nil
}

// metaWalker checks metadata depth first with a bounded recursion (at most
// MaxMetadataDepth+1 frames) and no allocation per value. size is a lower
// bound of the JSON encoding's length so far; every value visited adds at
// least one byte to it, so a walk visits at most MaxMetadataBytes values
// even when the metadata shares or repeats parts of itself.
type metaWalker struct {
	path jsonPath
	size int
}

func (w *metaWalker) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", w.path.String(), fmt.Sprintf(format, args...))
}

// add counts n more bytes of JSON.
func (w *metaWalker) add(n int) error {
	w.size += n
	if w.size > MaxMetadataBytes {
		return w.errorf("metadata grows past %d bytes of JSON here", MaxMetadataBytes)
	}
	return nil
}

// value checks v, which sits at level depth if it is an object or a list.
func (w *metaWalker) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		return w.add(len("null"))
	case bool:
		return w.add(len("true"))
	case string:
		if err := w.add(len(x) + 2); err != nil {
			return err
		}
		if !utf8.ValidString(x) {
			return w.errorf("string is not valid UTF-8")
		}
		return nil
	case float64:
		return w.float(x)
	case float32:
		return w.float(float64(x))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return w.add(1)
	case json.Number:
		return w.number(x)
	case map[string]any:
		if x == nil {
			return w.add(len("null"))
		}
		return w.object(x, depth)
	case []any:
		if x == nil {
			return w.add(len("null"))
		}
		return w.list(x, depth)
	}
	return w.other(v, depth)
}

func (w *metaWalker) float(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return w.errorf("%v is not a JSON number", f)
	}
	return w.add(1)
}

// number checks what Marshal writes for n and Unmarshal reads back: a JSON
// number literal ("" is written as 0) within float64's range.
func (w *metaWalker) number(n json.Number) error {
	if err := w.add(max(len(n), 1)); err != nil {
		return err
	}
	if n == "" {
		return nil
	}
	if !isJSONNumber(string(n)) {
		return w.errorf("%q is not a JSON number", string(n))
	}
	if _, err := n.Float64(); err != nil {
		return w.errorf("%s is out of float64 range", string(n))
	}
	return nil
}

func (w *metaWalker) object(m map[string]any, depth int) error {
	if depth > MaxMetadataDepth {
		return w.errorf("nested deeper than %d levels", MaxMetadataDepth)
	}
	if err := w.add(2 + max(len(m)-1, 0)); err != nil { // braces and commas
		return err
	}
	for k, e := range m {
		if err := w.add(len(k) + 3); err != nil { // quotes and colon
			return err
		}
		if !utf8.ValidString(k) {
			return w.errorf("key %q is not valid UTF-8", k)
		}
		w.path.pushKey(k)
		err := w.value(e, depth+1)
		w.path.pop()
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *metaWalker) list(l []any, depth int) error {
	if depth > MaxMetadataDepth {
		return w.errorf("nested deeper than %d levels", MaxMetadataDepth)
	}
	if err := w.add(2 + max(len(l)-1, 0)); err != nil { // brackets and commas
		return err
	}
	w.path.pushIndex(0)
	defer w.path.pop()
	for i, e := range l {
		w.path.setIndex(i)
		if err := w.value(e, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// other checks a value of any other Go type (a typed slice or map, a
// struct, a json.Marshaler) by what encoding/json makes of it: it must
// encode, fit in what is left of the size limit, nest no deeper than the
// depth limit, and decode again.
func (w *metaWalker) other(v any, depth int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return w.errorf("cannot be encoded as JSON: %v", err)
	}
	if err := w.add(len(b)); err != nil {
		return err
	}
	if err := scanDepth(b, &w.path, depth, MaxMetadataDepth); err != nil {
		return err
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		return w.errorf("encodes as JSON that does not decode: %v", err)
	}
	return nil
}

// isJSONNumber reports whether s is a JSON number literal.
func isJSONNumber(s string) bool {
	digits := func(i int) int {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(i + 1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if j := digits(i); j > i {
			i = j
		} else {
			return false
		}
	}
	return i == len(s)
}

// jsonPath is the position of a value inside a JSON document during a
// walk: the keys and list indexes that lead to it from the root. Walkers
// push and pop segments as they go and format the path only to report an
// error, so that a walk costs no allocation per level.
type jsonPath struct {
	root string
	segs []pathSeg
}

type pathSeg struct {
	key   string
	index int // a list index, or -1 for key
}

// newJSONPath returns an empty path at root with room for depth segments.
func newJSONPath(root string, depth int) jsonPath {
	return jsonPath{root: root, segs: make([]pathSeg, 0, depth+1)}
}

func (p *jsonPath) pushKey(k string) { p.segs = append(p.segs, pathSeg{key: k, index: -1}) }
func (p *jsonPath) pushIndex(i int)  { p.segs = append(p.segs, pathSeg{index: i}) }
func (p *jsonPath) setIndex(i int)   { p.segs[len(p.segs)-1].index = i }
func (p *jsonPath) pop()             { p.segs = p.segs[:len(p.segs)-1] }
func (p *jsonPath) truncate(n int)   { p.segs = p.segs[:n] }

// String formats the path as root.key[index]; a key that is not a plain
// name (letters, digits, '_', '-', '$') is quoted as root["a key"], and
// long keys are cut short.
func (p *jsonPath) String() string {
	var b strings.Builder
	b.WriteString(p.root)
	for _, s := range p.segs {
		switch {
		case s.index >= 0:
			fmt.Fprintf(&b, "[%d]", s.index)
		case plainKey(s.key):
			b.WriteByte('.')
			b.WriteString(s.key)
		default:
			k := s.key
			if len(k) > maxPathKey {
				k = k[:maxPathKey] + "..."
			}
			fmt.Fprintf(&b, "[%q]", k)
		}
	}
	return b.String()
}

// maxPathKey is the longest key an error path shows in full.
const maxPathKey = 64

func plainKey(k string) bool {
	if k == "" || len(k) > maxPathKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}

// maxNesting is MaxMetadataDepth and MaxFilterDepth: the deepest document
// scanDepth checks.
const maxNesting = 64

// scanFrame is an object or list open during scanDepth.
type scanFrame struct {
	object   bool
	wantKey  bool // an object expecting a key next
	index    int  // the current element of a list
	keyStart int  // the current key of an object, quoted: s[keyStart:keyEnd]
	keyEnd   int
}

// scanDepth checks that the JSON text s, whose outermost value sits at
// level depth of the document p points into, nests no deeper than limit
// (at most maxNesting); the error names the path of the first object or
// list too deep. It reads s once, without decoding it or allocating (but
// for the error), and honours strings and escapes. On malformed text it
// still stops at the first bracket deeper than limit (the path it names
// may then be off) and leaves every other error to the decoder. p is
// unchanged on return.
func scanDepth[T string | []byte](s T, p *jsonPath, depth, limit int) error {
	var stack [maxNesting + 1]scanFrame
	open := 0 // frames in use
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if open > 0 {
				if f := &stack[open-1]; f.object && f.wantKey {
					f.keyStart, f.keyEnd, f.wantKey = i, min(j+1, len(s)), false
				}
			}
			i = j
		case '{', '[':
			if depth+open > limit || open == len(stack) {
				return scanDepthError(s, p, stack[:open], limit)
			}
			stack[open] = scanFrame{object: c == '{', wantKey: c == '{'}
			open++
		case '}', ']':
			if open > 0 {
				open--
			}
		case ',':
			if open > 0 {
				if f := &stack[open-1]; f.object {
					f.wantKey = true
				} else {
					f.index++
				}
			}
		}
	}
	return nil
}

// scanDepthError formats scanDepth's error: p followed by the current key
// or index of each open frame.
func scanDepthError[T string | []byte](s T, p *jsonPath, frames []scanFrame, limit int) error {
	n := len(p.segs)
	defer p.truncate(n)
	for _, f := range frames {
		if !f.object {
			p.pushIndex(f.index)
			continue
		}
		raw := []byte(s[f.keyStart:f.keyEnd])
		var k string
		if json.Unmarshal(raw, &k) != nil {
			k = string(raw)
		}
		p.pushKey(k)
	}
	return fmt.Errorf("%s: nested deeper than %d levels", p.String(), limit)
}

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
