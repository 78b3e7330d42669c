package engine

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/mnemodb/mnemo"
)

// spread applies q.Spread to hits (scored, any order; keys: their
// records' keys, in the same order; cand: what the query's filter admits,
// when it is selective): each candidate
// adds its share to its neighbours, the Window records of its group
// nearest below its position and the Window nearest above (ties in
// position by ID), which join the hits, after them and in ID order, when
// they were not among them and can rank among the best q.K. The caller
// holds c.mu and sorts the result.
//
// Neighbours are found by walking the positions next to a candidate's
// through the field index, which costs a few map reads when positions
// are dense, as the adapters' are; a candidate whose neighbours the walk
// does not reach in walkSteps positions (many groups interleaved, or
// sparse positions such as times, or the first and last records of a
// group) reads its group in position order: sorted once, then kept in
// order by the field index as writes change it.
func (c *Collection) spread(q mnemo.Query, hits []mnemo.Hit, keys []uint64, cand admittedKeys) []mnemo.Hit {
	s := spreader{c: c, nb: q.Spread, filter: q.Filter, cand: cand, w: max(q.Spread.Window, 1), sorted: map[any][]placed{}}
	s.positions = c.fields.m[s.nb.Position]
	if s.nb.Group != "" {
		s.groups = c.fields.m[s.nb.Group]
	}
	found := len(hits)
	byKey := make(map[uint64]int, len(hits))
	base := make([]float64, len(hits))
	for i, h := range hits {
		byKey[keys[i]] = i
		base[i] = h.Score
	}
	// The neighbours the query had not found gather their shares here
	// (byKey holds -1-i for extra[i]) and become hits only if they can
	// rank.
	type share struct {
		key   uint64
		score float64
	}
	var extra []share
	var near []uint64
	for i, key := range keys {
		g, p, ok := s.nb.Place(c.meta[key])
		if !ok {
			continue
		}
		near = s.neighbours(near[:0], key, g, p)
		for _, n := range near {
			j, seen := byKey[n]
			switch {
			case !seen:
				byKey[n] = -1 - len(extra)
				extra = append(extra, share{n, s.nb.Weight * base[i]})
			case j < 0:
				extra[-1-j].score += s.nb.Weight * base[i]
			default:
				hits[j].Score += s.nb.Weight * base[i]
			}
		}
	}
	// Without MinSimilarity, which may drop hits after this, a neighbour
	// that scores no more than the K-th best candidate ranks below K
	// candidates (equal scores keep the candidates first): it cannot be
	// returned, and is left out.
	if q.MinSimilarity == nil && found >= q.K && len(extra) > 0 {
		scores := make([]float64, found)
		for i := range found {
			scores[i] = hits[i].Score
		}
		slices.Sort(scores)
		floor := scores[found-q.K]
		extra = slices.DeleteFunc(extra, func(e share) bool { return e.score <= floor })
	}
	slices.SortFunc(extra, func(a, b share) int { return strings.Compare(c.keys[a.key], c.keys[b.key]) })
	for _, e := range extra {
		hits = append(hits, mnemo.Hit{Record: mnemo.Record{ID: c.keys[e.key]}, Score: e.score})
	}
	return hits
}

// walkSteps is how many positions on each side of a candidate spread
// walks before it reads the candidate's group in order instead (a group
// of at most sortLimit records is read in order at once).
const walkSteps = 32

// walkLimit bounds the positions spread walks: past it float64 does not
// hold every integer, and p+d may not be a position of its own.
const walkLimit = 1 << 52

// placed is a record of a group with its position, for a group read in
// position order.
type placed struct {
	pos float64
	id  string
	key uint64
}

// spreader finds the neighbours of one query's candidates.
type spreader struct {
	c         *Collection
	nb        *mnemo.Spread
	filter    *mnemo.Filter
	cand      admittedKeys // a selective filter's records: read in order instead of the groups'
	w         int
	positions map[any]map[uint64]struct{} // position -> keys
	groups    map[any]map[uint64]struct{} // group -> keys; nil without Group
	sorted    map[any][]placed            // groups read in order, by group
}

// neighbours appends to out the neighbours of the candidate key at
// position p of group g: the w admitted records nearest below p and the
// w nearest above, nearer first, equal positions in ID order. A group
// read in order already, or small enough to sort at once, is searched in
// order; a large one is walked first.
func (s *spreader) neighbours(out []uint64, key uint64, g any, p float64) []uint64 {
	if list, ok := s.sorted[g]; ok {
		return s.inOrder(out, key, p, list)
	}
	var members map[uint64]struct{} // nil: the whole collection is one group
	if s.nb.Group != "" {
		if members = s.groups[g]; members == nil {
			return out
		}
	}
	if math.Abs(p) < walkLimit && (members == nil || len(members) > sortLimit) && !s.c.fields.hasOrder(s.nb.Group, g, s.nb.Position) {
		below, okBelow := s.walk(out, key, p, -1, members)
		if okBelow {
			if all, ok := s.walk(below, key, p, 1, members); ok {
				return all
			}
		}
	}
	return s.inOrder(out, key, p, s.order(g, members))
}

// sortLimit is the size up to which a group is read in order (sorted
// once, then kept until a write changes it) rather than walked.
const sortLimit = 4096

// walk appends the w admitted members nearest p on one side (dir -1 or
// 1) by reading positions p+dir, p+2*dir, ...; ok is false when
// walkSteps positions did not hold w of them (out is then unchanged).
func (s *spreader) walk(out []uint64, key uint64, p float64, dir int, members map[uint64]struct{}) ([]uint64, bool) {
	start, n := len(out), 0
	for d := 1; d <= walkSteps; d++ {
		at := p + float64(dir*d)
		from := len(out)
		for k := range s.positions[at] {
			if k == key || !s.admits(k, members) {
				continue
			}
			out = append(out, k)
		}
		if len(out) == from {
			continue
		}
		slices.SortFunc(out[from:], func(a, b uint64) int { return strings.Compare(s.c.keys[a], s.c.keys[b]) })
		n += len(out) - from
		if n >= s.w {
			return out[:start+s.w], true
		}
	}
	return out[:start], false
}

// admits reports whether k is a member (any record with a position when
// members is nil) that the query's filter admits.
func (s *spreader) admits(k uint64, members map[uint64]struct{}) bool {
	if members != nil {
		if _, ok := members[k]; !ok {
			return false
		}
	}
	return s.filter.IsEmpty() || s.filter.Match(s.c.meta[k])
}

// inOrder appends the neighbours of key (at p) found in list, its group
// in position order.
func (s *spreader) inOrder(out []uint64, key uint64, p float64, list []placed) []uint64 {
	i, _ := slices.BinarySearchFunc(list, p, func(e placed, p float64) int { return cmp.Compare(e.pos, p) })
	// Below: runs of equal positions from the nearest down, each in ID
	// order.
	n := 0
	for hi := i; hi > 0 && n < s.w; {
		lo := hi - 1
		for lo > 0 && list[lo-1].pos == list[hi-1].pos {
			lo--
		}
		for _, e := range list[lo:hi] {
			if n < s.w && e.key != key && s.admits(e.key, nil) {
				out = append(out, e.key)
				n++
			}
		}
		hi = lo
	}
	j := i
	for j < len(list) && list[j].pos == p {
		j++
	}
	n = 0
	for _, e := range list[j:] {
		if n == s.w {
			break
		}
		if e.key != key && s.admits(e.key, nil) {
			out = append(out, e.key)
			n++
		}
	}
	return out
}

// order returns group g's placed records sorted by position, then ID,
// as the field index keeps them between writes; under a selective
// filter that admits fewer records than the group holds, only those,
// sorted for this query. It keeps the list for the rest of the query.
func (s *spreader) order(g any, members map[uint64]struct{}) []placed {
	if s.cand.ok && (members == nil || len(s.cand.keys) < len(members)) {
		var list []placed
		seen := make(map[uint64]bool, len(s.cand.keys))
		for _, k := range s.cand.keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			if _, member := members[k]; members != nil && !member {
				continue
			}
			// The filter itself is applied as the list is read (inOrder).
			if _, p, ok := s.nb.Place(s.c.meta[k]); ok {
				list = append(list, placed{p, s.c.keys[k], k})
			}
		}
		slices.SortFunc(list, comparePlaced)
		s.sorted[g] = list
		return list
	}
	list := s.c.fields.order(s.nb.Group, g, s.nb.Position, func() []placed {
		var list []placed
		add := func(k uint64) {
			if _, p, ok := s.nb.Place(s.c.meta[k]); ok {
				list = append(list, placed{p, s.c.keys[k], k})
			}
		}
		if members != nil {
			for k := range members {
				add(k)
			}
		} else {
			for _, keys := range s.positions {
				for k := range keys {
					add(k)
				}
			}
		}
		slices.SortFunc(list, comparePlaced)
		return list
	})
	s.sorted[g] = list
	return list
}
