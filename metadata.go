package mnemo

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

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
