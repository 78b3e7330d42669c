package engine

import "github.com/mnemodb/mnemo"

// fieldIndex is an in-memory index of scalar metadata values to record
// keys (field -> value -> keys), kept so that the query planner can find
// the records a selective filter admits without scanning: equality and $in resolve to their
// posting sets, $and to its smallest resolvable part, $or to the union of
// its parts when all resolve. It is not persisted; Open rebuilds it from
// the records. The collection's lock protects it.
type fieldIndex struct {
	m map[string]map[any]map[uint64]struct{} // field -> canonical value -> keys
}

func newFieldIndex() *fieldIndex {
	return &fieldIndex{m: make(map[string]map[any]map[uint64]struct{})}
}

func (p *fieldIndex) add(key uint64, meta map[string]any) {
	for f, raw := range meta {
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

func (p *fieldIndex) remove(key uint64, meta map[string]any) {
	for f, raw := range meta {
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
