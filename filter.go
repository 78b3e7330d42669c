package mnemo

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Filter is a parsed metadata filter. The zero Filter (or a nil *Filter)
// admits every record.
//
// The language is Chroma's: a JSON object whose keys are field names or the
// combinators $and and $or. A field maps to a value (equality) or to an
// object with exactly one operator:
//
//	{"source": "web"}                            equality
//	{"year": {"$gte": 2020}}                     $gt $gte $lt $lte: numbers or strings
//	{"lang": {"$ne": "fr"}}                      $ne: not equal (true when the field is absent)
//	{"tag": {"$in": ["a", "b"]}}                 $in, $nin: a list of values
//	{"draft": {"$exists": false}}                $exists: presence of the field
//	{"$and": [{...}, {...}]}, {"$or": [...]}     combinators, nested (see MaxFilterDepth)
//
// Several fields in one object are an implicit $and. Values are strings,
// numbers, booleans and null; equality between a number and a string is
// false, and integers and floats compare by value. A comparison with a value
// of another type (a number against a string) is false. Parse reports the
// first problem with its path ("filter.$and[1].year: ...").
// A Filter is immutable once built and safe for concurrent use.
type Filter struct {
	root node
}

type node interface {
	eval(meta map[string]any) bool
}

type (
	andNode []node
	orNode  []node
	cmpNode struct {
		field string
		op    string // $eq $ne $gt $gte $lt $lte
		val   any    // canonical: string, float64, bool or nil
	}
	inNode struct {
		field string
		vals  []any
		not   bool
	}
	existsNode struct {
		field string
		want  bool
	}
)

// Limits on filters.
const (
	// MaxFilterDepth bounds how deeply a filter nests, counted as for
	// metadata: the filter object is level 1 and each object or list inside
	// it a level deeper, so $and and $or nest up to 31 deep. It also bounds
	// a cyclic Go value (a map that contains itself), refused for nesting
	// too deep.
	MaxFilterDepth = maxNesting
	// MaxFilterValues bounds the values (objects, lists and scalars) of a
	// filter, counted as if it were written out as JSON text: a sub-filter
	// that several parents share counts once for each.
	MaxFilterValues = 1 << 20
)

// jsonSpace is the white space of JSON text.
const jsonSpace = " \t\r\n"

// ParseFilter parses a filter from its JSON text. An empty string (or one
// of JSON white space only) or "{}" admits everything. The text's nesting
// is checked against MaxFilterDepth before it is decoded, so the cost is
// linear in its length.
func ParseFilter(text string) (*Filter, error) {
	if strings.Trim(text, jsonSpace) == "" {
		return &Filter{}, nil
	}
	path := newJSONPath("filter", MaxFilterDepth)
	if err := scanDepth(text, &path, 1, MaxFilterDepth); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFilter, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the filter object", ErrBadFilter)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: filter: want a JSON object, got %s", ErrBadFilter, typeName(v))
	}
	return NewFilter(m)
}

// NewFilter builds a filter from its decoded form (what encoding/json
// produces, or the same shape written in Go: map[string]any, []any, string,
// float64, int, json.Number, bool, nil). It first checks m against
// MaxFilterDepth and MaxFilterValues, so that its cost is bounded whatever
// m holds, cycles included.
func NewFilter(m map[string]any) (*Filter, error) {
	if len(m) == 0 {
		return &Filter{}, nil
	}
	p := filterParser{path: newJSONPath("filter", MaxFilterDepth)}
	if err := p.check(m, 1); err != nil {
		return nil, err
	}
	root, err := p.object(m)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root}, nil
}

// Match reports whether a record with metadata meta passes the filter.
func (f *Filter) Match(meta map[string]any) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(meta)
}

// IsEmpty reports whether the filter admits everything.
func (f *Filter) IsEmpty() bool { return f == nil || f.root == nil }

// filterParser builds a filter's nodes, keeping the path of the value at
// hand for errors.
type filterParser struct {
	path   jsonPath
	values int // counted by check
}

func (p *filterParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBadFilter, p.path.String(), fmt.Sprintf(format, args...))
}

// check walks v, which sits at level depth if it is an object or a list,
// and reports the first value beyond MaxFilterValues or container deeper
// than MaxFilterDepth. Parsing descends only into what check has walked.
func (p *filterParser) check(v any, depth int) error {
	p.values++
	if p.values > MaxFilterValues {
		return p.errorf("the filter holds more than %d values", MaxFilterValues)
	}
	switch x := v.(type) {
	case map[string]any:
		if depth > MaxFilterDepth {
			return p.errorf("nested deeper than %d levels", MaxFilterDepth)
		}
		for k, e := range x {
			p.path.pushKey(k)
			err := p.check(e, depth+1)
			p.path.pop()
			if err != nil {
				return err
			}
		}
	case []any:
		if depth > MaxFilterDepth {
			return p.errorf("nested deeper than %d levels", MaxFilterDepth)
		}
		p.path.pushIndex(0)
		defer p.path.pop()
		for i, e := range x {
			p.path.setIndex(i)
			if err := p.check(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *filterParser) object(m map[string]any) (node, error) {
	if len(m) == 0 {
		return nil, p.errorf("empty object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic errors and evaluation order
	parts := make(andNode, 0, len(keys))
	for _, k := range keys {
		p.path.pushKey(k)
		n, err := p.member(k, m[k])
		p.path.pop()
		if err != nil {
			return nil, err
		}
		parts = append(parts, n)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return parts, nil
}

// member parses the key k of an object and its value v.
func (p *filterParser) member(k string, v any) (node, error) {
	switch {
	case k == "$and" || k == "$or":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return nil, p.errorf("want a non-empty list of objects")
		}
		kids := make([]node, 0, len(list))
		p.path.pushIndex(0)
		defer p.path.pop()
		for i, item := range list {
			p.path.setIndex(i)
			obj, ok := item.(map[string]any)
			if !ok {
				return nil, p.errorf("want an object, got %s", typeName(item))
			}
			kid, err := p.object(obj)
			if err != nil {
				return nil, err
			}
			kids = append(kids, kid)
		}
		if k == "$and" {
			return andNode(kids), nil
		}
		return orNode(kids), nil
	case strings.HasPrefix(k, "$"):
		return nil, p.errorf("unknown combinator (want $and or $or)")
	case k == "":
		return nil, p.errorf("empty field name")
	}
	return p.field(k, v)
}

func (p *filterParser) field(field string, v any) (node, error) {
	ops, ok := v.(map[string]any)
	if !ok {
		val, err := p.scalar(v)
		if err != nil {
			return nil, err
		}
		return cmpNode{field, "$eq", val}, nil
	}
	if len(ops) != 1 {
		return nil, p.errorf("want exactly one operator, got %d", len(ops))
	}
	for op, arg := range ops {
		p.path.pushKey(op)
		defer p.path.pop()
		return p.operator(field, op, arg)
	}
	panic("unreachable")
}

func (p *filterParser) operator(field, op string, arg any) (node, error) {
	switch op {
	case "$eq", "$ne":
		val, err := p.scalar(arg)
		if err != nil {
			return nil, err
		}
		return cmpNode{field, op, val}, nil
	case "$gt", "$gte", "$lt", "$lte":
		val, err := p.scalar(arg)
		if err != nil {
			return nil, err
		}
		switch val.(type) {
		case float64, string:
		default:
			return nil, p.errorf("want a number or a string, got %s", typeName(arg))
		}
		return cmpNode{field, op, val}, nil
	case "$in", "$nin":
		list, ok := arg.([]any)
		if !ok {
			return nil, p.errorf("want a list, got %s", typeName(arg))
		}
		vals := make([]any, len(list))
		p.path.pushIndex(0)
		defer p.path.pop()
		for i, item := range list {
			p.path.setIndex(i)
			val, err := p.scalar(item)
			if err != nil {
				return nil, err
			}
			vals[i] = val
		}
		return inNode{field, vals, op == "$nin"}, nil
	case "$exists":
		b, ok := arg.(bool)
		if !ok {
			return nil, p.errorf("want true or false, got %s", typeName(arg))
		}
		return existsNode{field, b}, nil
	}
	return nil, p.errorf("unknown operator (want $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin or $exists)")
}

// scalar canonicalises a filter value: numbers to float64, strings, bools
// and nil as they are.
func (p *filterParser) scalar(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		// What the decoder makes of JSON text; a Go caller can put any
		// string in one, which ParseFloat would take for NaN or hex.
		if !isJSONNumber(string(x)) {
			return nil, p.errorf("%q is not a JSON number", string(x))
		}
		f, err := x.Float64()
		if err != nil {
			return nil, p.errorf("%v", err)
		}
		return f, nil
	}
	if f, ok := toFloat(v); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, p.errorf("%v is not a JSON number", f)
		}
		return f, nil
	}
	return nil, p.errorf("want a string, number, boolean or null, got %s", typeName(v))
}

// toFloat converts Go numeric types to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// FilterValue returns a metadata value in the canonical form filters
// compare against and FilterNode holds (string, float64, bool or nil;
// every Go number as float64); ok is false for values filters cannot
// match (lists, objects). An index of metadata values keyed by it finds
// exactly the records an equality admits.
func FilterValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, true
	}
	if f, ok := toFloat(v); ok {
		return f, true
	}
	return nil, false
}

func equal(a, b any) bool { return a == b } // canonical scalars compare with ==

func (n andNode) eval(m map[string]any) bool {
	for _, k := range n {
		if !k.eval(m) {
			return false
		}
	}
	return true
}

func (n orNode) eval(m map[string]any) bool {
	for _, k := range n {
		if k.eval(m) {
			return true
		}
	}
	return false
}

func (n cmpNode) eval(m map[string]any) bool {
	raw, present := m[n.field]
	v, ok := FilterValue(raw)
	if n.op == "$ne" {
		return !present || !ok || !equal(v, n.val)
	}
	if !present || !ok {
		return false
	}
	if n.op == "$eq" {
		return equal(v, n.val)
	}
	c, comparable := compare(v, n.val)
	if !comparable {
		return false
	}
	switch n.op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	}
	return c <= 0 // $lte
}

// compare orders two canonical values of the same ordered type.
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}

func (n inNode) eval(m map[string]any) bool {
	raw, present := m[n.field]
	v, ok := FilterValue(raw)
	in := present && ok && slices.ContainsFunc(n.vals, func(x any) bool { return equal(v, x) })
	return in != n.not
}

func (n existsNode) eval(m map[string]any) bool {
	_, present := m[n.field]
	return present == n.want
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// FilterOp names a node of a filter's tree (see Filter.Tree).
type FilterOp string

// Filter operators. FilterAnd and FilterOr combine their Children; every
// other operator tests the metadata field Field of a record.
const (
	FilterAnd    FilterOp = "$and"
	FilterOr     FilterOp = "$or"
	FilterEq     FilterOp = "$eq"
	FilterNe     FilterOp = "$ne"
	FilterGt     FilterOp = "$gt"
	FilterGte    FilterOp = "$gte"
	FilterLt     FilterOp = "$lt"
	FilterLte    FilterOp = "$lte"
	FilterIn     FilterOp = "$in"
	FilterNin    FilterOp = "$nin"
	FilterExists FilterOp = "$exists"
)

// FilterNode is one node of a parsed filter, for code that evaluates
// filters elsewhere (a backend that translates them to its own query
// language). Values are canonical: string, float64, bool or nil. Match
// defines the semantics each node must keep:
//
//   - $eq: the field is present, holds a scalar, and equals Value (same
//     type; numbers compare as float64).
//   - $ne: the negation of $eq (true for an absent field, or a list or
//     object).
//   - $gt, $gte, $lt, $lte: the field holds a value of Value's type (a
//     number or a string) and compares so with it (strings byte-wise);
//     false for any other type.
//   - $in: $eq with one of Values; $nin: its negation.
//   - $exists: the field's presence (even holding null) equals Value.
//
// A tree is the caller's copy (see Filter.Tree), safe to read from several
// goroutines while no one changes it.
type FilterNode struct {
	Op       FilterOp
	Field    string
	Value    any
	Values   []any
	Children []FilterNode
}

// Tree returns the filter as a tree of nodes, or false for a filter that
// admits everything. Implicit conjunctions (several fields in one object)
// are FilterAnd nodes, with fields in sorted order. The tree is a copy:
// changing it does not change the filter. Its cost is linear in the
// filter's size.
func (f *Filter) Tree() (FilterNode, bool) {
	if f.IsEmpty() {
		return FilterNode{}, false
	}
	return treeOf(f.root), true
}

func treeOf(n node) FilterNode {
	switch x := n.(type) {
	case andNode:
		return FilterNode{Op: FilterAnd, Children: treesOf(x)}
	case orNode:
		return FilterNode{Op: FilterOr, Children: treesOf(x)}
	case cmpNode:
		return FilterNode{Op: FilterOp(x.op), Field: x.field, Value: x.val}
	case inNode:
		op := FilterIn
		if x.not {
			op = FilterNin
		}
		return FilterNode{Op: op, Field: x.field, Values: slices.Clone(x.vals)}
	case existsNode:
		return FilterNode{Op: FilterExists, Field: x.field, Value: x.want}
	}
	panic(fmt.Sprintf("mnemo: unknown filter node %T", n))
}

func treesOf(ns []node) []FilterNode {
	out := make([]FilterNode, len(ns))
	for i, n := range ns {
		out[i] = treeOf(n)
	}
	return out
}

// Reduce returns the filter without the conditions that hold for every
// record: holds is asked about each condition (a node that is not
// FilterAnd or FilterOr, as Tree gives it) and answers true only when
// that condition admits every record the filter will be matched against
// (a backend that knows, say, that no record has a field). A conjunction
// loses such parts, a disjunction with one holds as a whole, and a filter
// that then admits everything comes back empty (nil). f is not changed;
// with nothing to drop, Reduce returns f itself.
func (f *Filter) Reduce(holds func(FilterNode) bool) *Filter {
	if f.IsEmpty() {
		return nil
	}
	root, always := reduce(f.root, holds)
	switch {
	case always:
		return nil
	case root == nil:
		return f
	}
	return &Filter{root: root}
}

// reduce returns n without the parts that hold (nil when nothing
// changed), or always when n itself holds for every record.
func reduce(n node, holds func(FilterNode) bool) (out node, always bool) {
	switch x := n.(type) {
	case andNode:
		kids, changed, anyHolds := reduceAll(x, holds)
		switch {
		case !changed && !anyHolds:
			return nil, false
		case len(kids) == 0:
			return nil, true
		case len(kids) == 1:
			return kids[0], false
		}
		return andNode(kids), false
	case orNode:
		kids, changed, anyHolds := reduceAll(x, holds)
		switch {
		case anyHolds:
			return nil, true // one part always true: the whole is
		case !changed:
			return nil, false
		}
		return orNode(kids), false
	}
	return nil, holds(treeOf(n))
}

// reduceAll reduces each of ns: kids are the parts that do not always
// hold, each reduced; changed reports whether one of them was, anyHolds
// whether a part always holds (and was left out of kids).
func reduceAll(ns []node, holds func(FilterNode) bool) (kids []node, changed, anyHolds bool) {
	kids = make([]node, 0, len(ns))
	for _, n := range ns {
		switch r, always := reduce(n, holds); {
		case always:
			anyHolds = true
		case r != nil:
			kids, changed = append(kids, r), true
		default:
			kids = append(kids, n)
		}
	}
	return kids, changed, anyHolds
}

// AndFilters returns the filter that admits what every one of fs admits;
// nil and empty filters admit everything and are left out. The filters
// are not changed (a Filter is immutable) and may be shared.
func AndFilters(fs ...*Filter) *Filter {
	var kids andNode
	for _, f := range fs {
		if !f.IsEmpty() {
			kids = append(kids, f.root)
		}
	}
	switch len(kids) {
	case 0:
		return &Filter{}
	case 1:
		return &Filter{root: kids[0]}
	}
	return &Filter{root: kids}
}
