package engine

// postings is an in-memory inverted index of scalar metadata values to
// record keys, kept so the query planner can find the records a selective
// filter admits without scanning: equality and $in resolve to their
// posting sets, $and to its smallest resolvable part, $or to the union of
// its parts when all resolve. It is not persisted; Open rebuilds it from
// the records. The collection's lock protects it.
type postings struct {
	m map[string]map[any]map[uint64]struct{} // field -> canonical value -> keys
}

func newPostings() *postings {
	return &postings{m: make(map[string]map[any]map[uint64]struct{})}
}

func (p *postings) add(key uint64, meta map[string]any) {
	for f, raw := range meta {
		v, ok := canon(raw)
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

func (p *postings) remove(key uint64, meta map[string]any) {
	for f, raw := range meta {
		v, ok := canon(raw)
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
// the postings cannot bound it. The result may hold duplicates.
func (p *postings) candidates(n node, limit int) (keys []uint64, ok bool) {
	switch x := n.(type) {
	case cmpNode:
		if x.op != "$eq" {
			return nil, false
		}
		set := p.m[x.field][x.val]
		if len(set) > limit {
			return nil, false
		}
		for k := range set {
			keys = append(keys, k)
		}
		return keys, true
	case inNode:
		if x.not {
			return nil, false
		}
		for _, v := range x.vals {
			set := p.m[x.field][v]
			if len(keys)+len(set) > limit {
				return nil, false
			}
			for k := range set {
				keys = append(keys, k)
			}
		}
		return keys, true
	case andNode:
		var best []uint64
		found := false
		for _, kid := range x {
			if ks, ok := p.candidates(kid, limit); ok && (!found || len(ks) < len(best)) {
				best, found = ks, true
				limit = len(ks)
			}
		}
		return best, found
	case orNode:
		for _, kid := range x {
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
