package engine

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"github.com/mnemodb/mnemo"
)

// fieldIndex is an in-memory index of scalar metadata values to record
// keys (field -> value -> keys), kept so that the query planner can find
// the records a selective filter admits without scanning: equality and $in resolve to their
// posting sets, $and to its smallest resolvable part, $or to the union of
// its parts when all resolve. It is not persisted; Open rebuilds it from
// the records. The collection's lock protects it.
//
// It also keeps the groups that neighbour spreading read in position
// order, once read: a write moves the record it changes within them,
// O(log n) to find and O(n) to move for a group of n.
type fieldIndex struct {
	m       map[string]map[any]map[uint64]struct{} // field -> canonical value -> keys
	present map[string]int                         // field -> records that have it, whatever its value

	// ordersMu protects orders and whole, which queries fill under the
	// collection's read lock; writes, under its write lock, edit them.
	ordersMu sync.Mutex
	orders   map[string]map[any]map[string][]placed // group field -> value -> position field -> order
	whole    map[string][]placed                    // position field -> the whole collection's order
}

func newFieldIndex() *fieldIndex {
	return &fieldIndex{m: make(map[string]map[any]map[uint64]struct{}), present: make(map[string]int), orders: make(map[string]map[any]map[string][]placed), whole: make(map[string][]placed)}
}

// reorder keeps the kept orders true to a record (key, id, meta)
// entering them (in) or leaving them: a write removes the old record and
// adds the new one, each placed where Spread.Place puts it.
func (p *fieldIndex) reorder(key uint64, id string, meta map[string]any, in bool) {
	p.ordersMu.Lock()
	defer p.ordersMu.Unlock()
	for pos, list := range p.whole {
		sp := mnemo.Spread{Position: pos}
		if _, at, ok := sp.Place(meta); ok {
			p.whole[pos] = edit(list, placed{at, id, key}, in)
		}
	}
	if len(p.orders) == 0 {
		return
	}
	for f, raw := range meta {
		vals := p.orders[f]
		if vals == nil {
			continue
		}
		v, ok := mnemo.FilterValue(raw)
		if !ok || vals[v] == nil {
			continue
		}
		for pos, list := range vals[v] {
			sp := mnemo.Spread{Group: f, Position: pos}
			if _, at, ok := sp.Place(meta); ok {
				vals[v][pos] = edit(list, placed{at, id, key}, in)
			}
		}
	}
}

// edit inserts e in list, sorted by position and ID (in), or removes it.
func edit(list []placed, e placed, in bool) []placed {
	i, found := slices.BinarySearchFunc(list, e, comparePlaced)
	switch {
	case in && found:
		list[i] = e
	case in:
		list = slices.Insert(list, i, e)
	case found:
		list = slices.Delete(list, i, i+1)
	}
	return list
}

// comparePlaced orders placed records by position, then ID.
func comparePlaced(a, b placed) int {
	if d := cmp.Compare(a.pos, b.pos); d != 0 {
		return d
	}
	return strings.Compare(a.id, b.id)
}

// hasOrder reports whether the order that order would return is kept.
func (p *fieldIndex) hasOrder(group string, value any, pos string) bool {
	p.ordersMu.Lock()
	defer p.ordersMu.Unlock()
	if group == "" {
		_, ok := p.whole[pos]
		return ok
	}
	_, ok := p.orders[group][value][pos]
	return ok
}

// order returns the order of the records whose field group equals value
// (group "": the whole collection), by the position field pos, as kept
// since the last write that changed it, or builds it with build and
// keeps it.
func (p *fieldIndex) order(group string, value any, pos string, build func() []placed) []placed {
	p.ordersMu.Lock()
	var list []placed
	ok := false
	if group == "" {
		list, ok = p.whole[pos]
	} else {
		list, ok = p.orders[group][value][pos]
	}
	p.ordersMu.Unlock()
	if ok {
		return list
	}
	list = build()
	p.ordersMu.Lock()
	defer p.ordersMu.Unlock()
	if group == "" {
		p.whole[pos] = list
		return list
	}
	vals := p.orders[group]
	if vals == nil {
		vals = make(map[any]map[string][]placed)
		p.orders[group] = vals
	}
	if vals[value] == nil {
		vals[value] = make(map[string][]placed)
	}
	vals[value][pos] = list
	return list
}

func (p *fieldIndex) add(key uint64, id string, meta map[string]any) {
	p.reorder(key, id, meta, true)
	for f, raw := range meta {
		p.present[f]++
		v, ok := mnemo.FilterValue(raw)
		if !ok {
			continue
		}
		vals := p.m[f]
		if vals == nil {
			vals = make(map[any]map[uint64]struct{})
			p.m[f] = vals
		}
		keys := vals[v]
		if keys == nil {
			keys = make(map[uint64]struct{})
			vals[v] = keys
		}
		keys[key] = struct{}{}
	}
}

func (p *fieldIndex) remove(key uint64, id string, meta map[string]any) {
	p.reorder(key, id, meta, false)
	for f, raw := range meta {
		if p.present[f]--; p.present[f] <= 0 {
			delete(p.present, f)
		}
		v, ok := mnemo.FilterValue(raw)
		if !ok {
			continue
		}
		if keys := p.m[f][v]; keys != nil {
			delete(keys, key)
			if len(keys) == 0 {
				delete(p.m[f], v)
			}
		}
	}
}

// candidates returns a superset of the keys n admits, or ok = false when
// the index cannot bound it. The result may hold duplicates.
func (p *fieldIndex) candidates(n mnemo.FilterNode, limit int) (keys []uint64, ok bool) {
	switch n.Op {
	case mnemo.FilterEq:
		set := p.m[n.Field][n.Value]
		if len(set) > limit {
			return nil, false
		}
		for k := range set {
			keys = append(keys, k)
		}
		return keys, true
	case mnemo.FilterIn:
		for _, v := range n.Values {
			set := p.m[n.Field][v]
			if len(keys)+len(set) > limit {
				return nil, false
			}
			for k := range set {
				keys = append(keys, k)
			}
		}
		return keys, true
	case mnemo.FilterAnd:
		var best []uint64
		found := false
		for _, kid := range n.Children {
			if ks, ok := p.candidates(kid, limit); ok && (!found || len(ks) < len(best)) {
				best, found = ks, true
				limit = len(ks)
			}
		}
		return best, found
	case mnemo.FilterOr:
		for _, kid := range n.Children {
			ks, ok := p.candidates(kid, limit-len(keys))
			if !ok {
				return nil, false
			}
			keys = append(keys, ks...)
		}
		return keys, true
	}
	return nil, false
}

// holds reports whether the filter condition n (not $and or $or) admits
// every one of the total records the index holds, as the index knows
// without reading them: $exists on a field every record has or none has,
// and $ne or $nin on a field no record has. The adapters' expiry filter
// ("no expiry, or a later one") holds so in a memory where nothing
// expires, and Filter.Reduce then drops it from the query.
func (p *fieldIndex) holds(n mnemo.FilterNode, total int) bool {
	has := p.present[n.Field]
	switch n.Op {
	case mnemo.FilterExists:
		if want, _ := n.Value.(bool); want {
			return has == total
		}
		return has == 0
	case mnemo.FilterNe, mnemo.FilterNin:
		return has == 0
	}
	return false
}
