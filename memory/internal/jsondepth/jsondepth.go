// Package jsondepth measures how deeply a Go value nests objects and
// arrays once encoded as JSON, without encoding it and without recursion,
// so that the memory adapters can refuse metadata the database would not
// store (or could not read back) with an error naming where it goes too
// deep, before anything is written.
//
// Levels count the objects and arrays enclosing a value: in
// {"a": {"b": [1]}} the outer object is level 1 and the array level 3.
// The walk follows encoding/json's rules where they decide nesting: maps,
// structs, slices and arrays are levels; pointers and interfaces are not;
// embedded structs are flattened into their parent; []byte is a string;
// nil maps, slices and pointers are null; values that marshal themselves
// (json.Marshaler, encoding.TextMarshaler) are taken as leaves.
//
// A value that contains itself (a map holding itself, a cyclic pointer
// chain) is reported as a cycle. A shared container (a map, a slice, or a
// value behind a pointer) is walked again only when reached deeper than
// before, so a value that shares sub-values many times (a DAG) costs at
// most limit passes over it, never one per path.
package jsondepth

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// MaxMetadata is the deepest nesting of objects and arrays the engine
// stores in a record's metadata, the top-level object being level 1.
const MaxMetadata = 64

// Check returns an error if v, encoded as JSON, nests objects and arrays
// more than limit levels deep, or contains itself. name names v in the
// error, whose path leads from it to the first place found too deep, such
// as `tool_args.a.b[3]: nested deeper than 63 levels`.
func Check(name string, v any, limit int) error {
	w := walker{limit: limit, done: map[ref]int{}, open: map[ref]bool{}}
	return w.walk(name, reflect.ValueOf(v))
}

// ref identifies a container that can be reached more than once: a map,
// a slice's backing array (with its length), or a pointer to a struct or
// an array.
type ref struct {
	typ reflect.Type
	ptr uintptr
	n   int
}

// item is one entry of the walk's stack: a value to visit, or (exit) the
// end of a container's children.
type item struct {
	v     reflect.Value
	level int   // levels enclosing v
	path  *step // how v is reached
	exit  bool  // v's children are done: v is no longer open
	r     ref   // v's identity when exit
}

// step is one segment of a path, linked to its parent.
type step struct {
	parent *step
	seg    string // ".key" or "[i]"
}

type walker struct {
	limit int
	done  map[ref]int  // container -> deepest level it was fully walked at
	open  map[ref]bool // containers whose children are being walked
	stack []item
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func (w *walker) walk(name string, v reflect.Value) error {
	w.stack = append(w.stack, item{v: v, path: &step{seg: name}})
	for len(w.stack) > 0 {
		it := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if it.exit {
			delete(w.open, it.r)
			w.done[it.r] = max(w.done[it.r], it.level)
			continue
		}
		if err := w.visit(it); err != nil {
			return err
		}
	}
	return nil
}

// visit checks one value and pushes its children.
func (w *walker) visit(it item) error {
	v, ptr := indirect(it.v)
	if !v.IsValid() || isLeaf(v) {
		return nil
	}
	level := it.level + 1
	if level > w.limit {
		return fmt.Errorf("%s: nested deeper than %d levels", render(it.path), w.limit)
	}
	r, shared := identity(v, ptr)
	if shared {
		if w.open[r] {
			return fmt.Errorf("%s: contains itself (a cycle)", render(it.path))
		}
		if d, ok := w.done[r]; ok && d >= level {
			return nil // walked before at this level or deeper, and fine there
		}
		w.open[r] = true
		w.stack = append(w.stack, item{level: level, exit: true, r: r})
	}
	switch v.Kind() {
	case reflect.Map:
		for it2 := v.MapRange(); it2.Next(); {
			w.push(it2.Value(), level, it.path, "."+key(it2.Key()))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.push(v.Index(i), level, it.path, "["+strconv.Itoa(i)+"]")
		}
	case reflect.Struct:
		w.fields(v, level, it.path, map[reflect.Type]bool{v.Type(): true})
	}
	return nil
}

// fields pushes a struct's exported fields, flattening embedded structs
// as encoding/json does; like it, it flattens each struct type once, so
// the recursion is as deep as there are distinct embedded types.
func (w *walker) fields(v reflect.Value, level int, path *step, flattened map[reflect.Type]bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			if e, _ := indirect(fv); e.IsValid() && e.Kind() == reflect.Struct && !isLeaf(e) {
				if !flattened[e.Type()] {
					flattened[e.Type()] = true
					w.fields(e, level, path, flattened)
				}
				continue
			}
		}
		if !f.IsExported() && !(f.Anonymous && isStruct(f.Type)) {
			continue // encoding/json keeps unexported embedded structs
		}
		if name == "" {
			name = f.Name
		}
		w.push(fv, level, path, "."+name)
	}
}

func (w *walker) push(v reflect.Value, level int, parent *step, seg string) {
	if c, _ := indirect(v); !c.IsValid() || isLeaf(c) {
		return // scalars need no path
	}
	w.stack = append(w.stack, item{v: v, level: level, path: &step{parent: parent, seg: seg}})
}

// indirect unwraps interfaces and pointers and returns the value and the
// last pointer passed (the zero Value if none); a zero value means null.
// A pointer to a type that marshals itself is returned as it is. A cycle
// of pointers and interfaces with no container in it is cut after a
// bound, as null; encoding/json fails on it anyway.
func indirect(v reflect.Value) (val, ptr reflect.Value) {
	for range 1000 {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if v.IsNil() {
				return reflect.Value{}, reflect.Value{}
			}
			if v.Kind() == reflect.Pointer {
				if marshals(v.Type()) {
					return v, ptr
				}
				ptr = v
			}
			v = v.Elem()
		default:
			return v, ptr
		}
	}
	return reflect.Value{}, reflect.Value{}
}

// isLeaf reports whether v encodes without nesting: scalars, []byte,
// nil maps and slices, and values that marshal themselves.
func isLeaf(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Struct:
	default:
		return true // a scalar, or a pointer that marshals itself (see indirect)
	}
	if marshals(v.Type()) {
		return true
	}
	switch v.Kind() {
	case reflect.Map:
		return v.IsNil()
	case reflect.Slice:
		return v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8
	}
	return false
}

func marshals(t reflect.Type) bool {
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// identity returns the identity of a map, a non-empty slice, or a struct
// or an array reached through pointer ptr.
func identity(v, ptr reflect.Value) (ref, bool) {
	switch v.Kind() {
	case reflect.Map:
		return ref{typ: v.Type(), ptr: v.Pointer()}, true
	case reflect.Slice:
		if v.Len() > 0 {
			return ref{typ: v.Type(), ptr: v.Pointer(), n: v.Len()}, true
		}
	default:
		if ptr.IsValid() {
			return ref{typ: ptr.Type(), ptr: ptr.Pointer()}, true
		}
	}
	return ref{}, false
}

func key(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	return fmt.Sprint(k.Interface())
}

func isStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// render spells a path; when it is long, its first and last segments
// around " ... ", each segment at most 40 bytes.
func render(p *step) string {
	var segs []string // leaf first
	for ; p != nil; p = p.parent {
		seg := p.seg
		if len(seg) > 40 {
			seg = strings.ToValidUTF8(seg[:37], "") + "..."
		}
		segs = append(segs, seg)
	}
	slices.Reverse(segs)
	total := 0
	for _, seg := range segs {
		total += len(seg)
	}
	if total <= 160 {
		return strings.Join(segs, "")
	}
	head, n := 0, 0
	for ; n+len(segs[head]) <= 80; head++ {
		n += len(segs[head])
	}
	tail, n := len(segs), 0
	for ; n+len(segs[tail-1]) <= 80; tail-- {
		n += len(segs[tail-1])
	}
	return strings.Join(segs[:head], "") + " ... " + strings.Join(segs[tail:], "")
}
