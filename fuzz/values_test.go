package fuzz

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"
)

// builder turns fuzz input into the Go values callers hand the engine as
// metadata or filters: maps and lists (deep, wide, or referring to a map or
// list that encloses them, which makes a cycle), strings that may not be
// UTF-8, numbers of several Go types (NaN and infinities included),
// json.Number and json.RawMessage text, booleans and nil. The input is read
// as a stream of opcodes and arguments; running out of it yields nils.
type builder struct {
	data  []byte
	keys  []string // keys to draw from; raw input bytes otherwise
	nodes int      // values built so far, bounded by maxNodes
	links int      // chain links built so far, bounded by maxLinks
	long  int      // bytes of long strings so far, bounded by maxLong
	open  []any    // maps and lists being built, for cycles
}

// Bounds on what one input builds.
const (
	maxNodes = 2000
	maxLinks = 1 << 17
	maxLong  = 3 << 20
)

// numbers are json.Number texts around the edges of what JSON and float64
// hold.
var numbers = []string{"", "0", "-0", "1e400", "-1e400", "1e-400", "1.5e308", "12345678901234567890", "0x10", "1e", "01", "+1", ".5", "1.", "NaN", " 1", "-"}

func (b *builder) byte() byte {
	if len(b.data) == 0 {
		return 0
	}
	c := b.data[0]
	b.data = b.data[1:]
	return c
}

func (b *builder) bytes(n int) []byte {
	n = min(n, len(b.data))
	out := b.data[:n:n]
	b.data = b.data[n:]
	return out
}

// key returns a key from b.keys or, now and then, raw bytes.
func (b *builder) key() string {
	c := int(b.byte())
	if c < 224 && len(b.keys) > 0 {
		return b.keys[c%len(b.keys)]
	}
	return string(b.bytes(c % 8))
}

// object builds a map of up to n members.
func (b *builder) object(n int) map[string]any {
	m := map[string]any{}
	b.open = append(b.open, m)
	for ; n > 0 && len(b.data) > 0; n-- {
		k := b.key()
		m[k] = b.value()
	}
	b.open = b.open[:len(b.open)-1]
	return m
}

// value builds one value.
func (b *builder) value() any {
	b.nodes++
	if b.nodes > maxNodes || len(b.data) == 0 {
		return nil
	}
	switch op := b.byte() % 16; op {
	case 0, 1:
		return b.object(int(b.byte() % 5))
	case 2, 3:
		l := make([]any, b.byte()%5)
		b.open = append(b.open, l)
		for i := range l {
			l[i] = b.value()
		}
		b.open = b.open[:len(b.open)-1]
		return l
	case 4:
		return string(b.bytes(int(b.byte() % 16)))
	case 5:
		var buf [8]byte
		copy(buf[:], b.bytes(8))
		return math.Float64frombits(binary.LittleEndian.Uint64(buf[:]))
	case 6:
		return int(int8(b.byte())) * int(b.byte())
	case 7:
		return b.byte()%2 == 0
	case 8:
		return nil
	case 9:
		return b.chain()
	case 10:
		if c := b.byte(); c < 128 {
			return json.Number(numbers[int(c)%len(numbers)])
		}
		return json.Number(b.bytes(int(b.byte() % 12)))
	case 11:
		var buf [8]byte
		copy(buf[:], b.bytes(8))
		switch b.byte() % 4 {
		case 0:
			return math.Float32frombits(binary.LittleEndian.Uint32(buf[:]))
		case 1:
			return binary.LittleEndian.Uint64(buf[:])
		case 2:
			return int64(binary.LittleEndian.Uint64(buf[:]))
		}
		return uint8(buf[0])
	case 12:
		if len(b.open) > 0 {
			return b.open[int(b.byte())%len(b.open)] // a cycle
		}
		return nil
	case 13:
		// Long text: up to 2 MiB, around MaxMetadataBytes.
		n := int(b.byte())<<13 | int(b.byte())
		if b.long+n > maxLong {
			return ""
		}
		b.long += n
		return strings.Repeat("x", n)
	case 14:
		return json.RawMessage(b.bytes(int(b.byte())))
	}
	// Typed containers encoding/json handles on its own.
	switch b.byte() % 3 {
	case 0:
		return []string{string(b.bytes(int(b.byte() % 8))), b.key()}
	case 1:
		return map[string]int{b.key(): int(b.byte())}
	}
	return []float64{float64(b.byte()), 0.5}
}

// chain builds n objects or lists nested in one another around a value,
// n up to 65,535: {"k": {"k": ... v}} or [[... v]].
func (b *builder) chain() any {
	n := int(b.byte())
	if n >= 0xc0 {
		n = (n-0xc0)<<10 | int(b.byte())<<2
	}
	n = min(n, maxLinks-b.links)
	b.links += n
	lists, k := b.byte()%2 == 0, b.key()
	v := b.value()
	for ; n > 0; n-- {
		if lists {
			v = []any{v}
		} else {
			v = map[string]any{k: v}
		}
	}
	return v
}

// depthOver reports whether v, at level depth if it is a map or a list,
// nests deeper than limit. It stops at the first container too deep, so a
// cycle costs a bounded walk. A nil map or list is JSON null, not a level.
func depthOver(v any, depth, limit int) bool {
	switch x := v.(type) {
	case map[string]any:
		if x != nil && depth > limit {
			return true
		}
		for _, e := range x {
			if depthOver(e, depth+1, limit) {
				return true
			}
		}
	case []any:
		if x != nil && depth > limit {
			return true
		}
		for _, e := range x {
			if depthOver(e, depth+1, limit) {
				return true
			}
		}
	}
	return false
}

// validUTF8 reports whether every string and key in v's maps and lists
// (not in other Go types, which encoding/json encodes as it likes) is
// valid UTF-8. v must be acyclic.
func validUTF8(v any) bool {
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x)
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !validUTF8(e) {
				return false
			}
		}
	case []any:
		for _, e := range x {
			if !validUTF8(e) {
				return false
			}
		}
	}
	return true
}
