package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"

	"github.com/mnemodb/mnemo"
)

// A record's place is the conversation (or any sequence) it belongs to,
// its group, and its position in it: the metadata fields mnemo.GroupField
// and mnemo.PositionField, which the memory adapters stamp on every
// memory and which the default query spreads over (mnemo.DefaultSpread).
// A JSONL line carries them as top-level "group" (a string) and
// "position" (an integer, |position| < 2^53):
//
//	{"id": "t3", "content": "Ana: the flight lands at nine", "group": "chat-7", "position": 3}
//
// A line with a position and no group is in group "". A line with a group
// and no position gets the next position of the collection's sequence
// (mnemo.Sequencer, the one the adapters number memories with), in line
// order, when its batch commits. A position given, at the top level or in
// the metadata, is stored as given and leaves the sequence alone: a
// neighbour is the nearest record of its group in order, whatever the
// gaps, and a given position near 2^53 must not end the sequence for
// every later writer. Give a group's records positions on every line or
// on none, so that the two numberings do not interleave. A line with neither has no place
// (unless its metadata sets the fields itself): it neither lifts nor is
// lifted by its neighbours. Export writes a record's place back as
// "group" and "position" when the metadata holds both as import would
// store them, so that export then import gives the same records.

// lineGroup is a line's "group": a JSON string.
type lineGroup string

// UnmarshalJSON accepts a JSON string.
func (g *lineGroup) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) == 0 || b[0] != '"' || json.Unmarshal(b, &s) != nil {
		return fmt.Errorf("group %s: want a string", oneLine(string(b), 30))
	}
	*g = lineGroup(s)
	return nil
}

// linePosition is a line's "position": a JSON number holding an integer
// whose magnitude is below 2^53, where float64 metadata holds every
// integer exactly.
type linePosition int64

// UnmarshalJSON accepts a JSON number holding an integer of magnitude
// below 2^53 (1e3 and 3.0 are integers).
func (p *linePosition) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= mnemo.MaxPosition {
		return fmt.Errorf("position %s: want an integer of magnitude below 2^53", oneLine(string(b), 30))
	}
	*p = linePosition(f)
	return nil
}

// placeLine stores the place a line gives at its top level (group, pos;
// nil when absent) in its record's metadata, and reports whether the
// position is to come from the collection's sequence. Metadata that sets
// mnemo.GroupField or mnemo.PositionField itself must agree with the
// place. A line without a top-level place keeps its metadata as it is.
func placeLine(rec *mnemo.Record, group *lineGroup, pos *linePosition) (fromSequence bool, err error) {
	if group == nil && pos == nil {
		return false, nil
	}
	g := ""
	if group != nil {
		g = string(*group)
	}
	if v, ok := rec.Metadata[mnemo.GroupField]; ok && v != g {
		return false, fmt.Errorf("metadata %q is %s, but the line's group is %q (a line with a position and no group is in group \"\"): give the group once, as \"group\"", mnemo.GroupField, jsonText(v), g)
	}
	if v, ok := rec.Metadata[mnemo.PositionField]; ok {
		f, isNum := v.(float64)
		if pos == nil {
			return false, fmt.Errorf("metadata %q is %s, but the line has a group and no position (it would get the next of the collection's sequence): give the position as \"position\"", mnemo.PositionField, jsonText(v))
		}
		if !isNum || f != float64(*pos) {
			return false, fmt.Errorf("metadata %q is %s, but the line's position is %d: give the position once, as \"position\"", mnemo.PositionField, jsonText(v), *pos)
		}
	}
	meta := make(map[string]any, len(rec.Metadata)+2)
	maps.Copy(meta, rec.Metadata)
	meta[mnemo.GroupField] = g
	// A position to come from the sequence holds the widest one until
	// then, so that checking the record checks the size it will have.
	meta[mnemo.PositionField] = int64(mnemo.MaxPosition - 1)
	if pos != nil {
		meta[mnemo.PositionField] = int64(*pos)
	}
	rec.Metadata = meta
	return pos == nil, nil
}

// jsonText is v as JSON, for messages.
func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// recordPlace returns the place a record's metadata holds as import
// stores one: a string group and an integer position of magnitude below
// 2^53; ok is false otherwise (no place, or fields import would refuse,
// which export leaves in the metadata).
func recordPlace(meta map[string]any) (group string, pos int64, ok bool) {
	g, isString := meta[mnemo.GroupField].(string)
	p, isPos := storedPosition(meta)
	if !isString || !isPos {
		return "", 0, false
	}
	return g, p, true
}

// withoutPlace returns meta without the place fields, nil when nothing
// is left. meta is not changed.
func withoutPlace(meta map[string]any) map[string]any {
	out := maps.Clone(meta)
	delete(out, mnemo.GroupField)
	delete(out, mnemo.PositionField)
	if len(out) == 0 {
		return nil
	}
	return out
}

// A sequence hands out the positions of a collection's sequence
// (mnemo.Sequencer) for one import. It is
// not safe for concurrent use.
type sequence struct {
	c       mnemo.Collection
	started bool // the sequence was found started, or started
}

// take returns the first of n (at least 1) consecutive positions of the
// sequence. The first call
// starts a sequence that was never started (a collection written before
// stores kept one, or only ever given positions) past the largest
// position stored, found by a scan, as the memory adapters do: it finds
// out by reserving a position, a gap that orders records all the same.
func (s *sequence) take(ctx context.Context, n int) (int64, error) {
	seq, ok := s.c.(mnemo.Sequencer)
	if !ok {
		return 0, fmt.Errorf("collection %q keeps no sequence of positions: give every line with a group its position", s.c.Name())
	}
	if !s.started {
		if err := s.start(ctx, seq); err != nil {
			return 0, err
		}
	}
	return seq.Reserve(ctx, n)
}

// start starts seq past the largest position stored in s's collection
// unless it was started.
func (s *sequence) start(ctx context.Context, seq mnemo.Sequencer) error {
	_, err := seq.Reserve(ctx, 1)
	if errors.Is(err, mnemo.ErrSequenceUnset) {
		var next int64
		if next, err = mnemo.NextPosition(ctx, s.c); err == nil {
			err = seq.Advance(ctx, next)
		}
	}
	s.started = err == nil
	return err
}

// storedPosition returns the position in meta when it is an integer of
// magnitude below 2^53 (of a line, or of metadata), else ok false.
func storedPosition(meta map[string]any) (int64, bool) {
	var p float64
	switch x := meta[mnemo.PositionField].(type) {
	case int64:
		return x, true
	case float64:
		p = x
	default:
		return 0, false
	}
	if p != math.Trunc(p) || math.Abs(p) >= mnemo.MaxPosition {
		return 0, false
	}
	return int64(p), true
}
