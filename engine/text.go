package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo/engine/internal/bm25"
	"github.com/mnemodb/mnemo/internal/telemetry"
	"github.com/mnemodb/mnemo/metrics"
)

// The full-text index's storage. Each record's analyzed text (a bm25.Doc:
// its length in terms and each distinct term with its frequency) is stored
// under 'x' cid key, in the entry format of package bm25, in the same
// Pebble batch as the record, so it is exactly as durable as the record and
// needs no log replay of its own. Memory holds a bm25.Index built from
// those entries at open (loadText) and kept as records are written and
// deleted; the collection's lock (c.mu) protects it.

// textDocOf is what the full-text index holds for a record of a
// collection with config cfg: mnemo.TextTerms, which every backend
// indexes.
func textDocOf(cfg mnemo.CollectionConfig, content string, meta map[string]any) bm25.Doc {
	terms, freqs, length := mnemo.TextTerms(cfg, content, meta)
	if length == 0 {
		return bm25.Doc{}
	}
	doc := bm25.Doc{Length: uint32(min(length, math.MaxUint32)), Terms: make([]bm25.TermFreq, len(terms))}
	for i, t := range terms {
		doc.Terms[i] = bm25.TermFreq{Term: t, TF: uint32(freqs[i])}
	}
	return doc
}

// loadText builds the in-memory full-text index from the stored entries.
// An entry is derived data: one that is missing (the record was written
// before its collection had a full-text index), damaged, or left without
// its record is rebuilt from the records, logged, and, when the database
// takes writes, stored again.
func (c *Collection) loadText() error {
	if c.text == nil {
		return nil
	}
	t := telemetry.Start(c.db.rec)
	rebuilt, err := c.readText()
	if t.On() && (rebuilt > 0 || err != nil) {
		t.Done(metrics.Event{Op: metrics.OpTextRebuild, Collection: c.Name(), Records: rebuilt, Err: err})
	}
	return err
}

// readText is loadText; it returns how many records' entries it made
// from the records (zero when every entry was intact).
func (c *Collection) readText() (int, error) {
	prefix := cidPrefix(tagText, c.id)
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return 0, err
	}
	var orphans [][]byte
	damaged := 0
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()[len(prefix):]
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return 0, readError(fmt.Sprintf("read full-text entries of %q", c.Name()), err)
		}
		if len(k) != 8 {
			orphans = append(orphans, slices.Clone(it.Key()))
			continue
		}
		key := binary.BigEndian.Uint64(k)
		if _, ok := c.keys[key]; !ok {
			orphans = append(orphans, slices.Clone(it.Key()))
			continue
		}
		d, err := bm25.Decode(v)
		if err != nil {
			damaged++
			continue
		}
		c.text.Add(key, d)
	}
	if err := it.Close(); err != nil {
		return 0, readError(fmt.Sprintf("read full-text entries of %q", c.Name()), err)
	}
	var missing []uint64
	for key := range c.keys {
		if !c.text.Added(key) {
			missing = append(missing, key)
		}
	}
	if len(missing) == 0 && len(orphans) == 0 {
		return 0, nil
	}
	slices.Sort(missing)
	b := c.db.pdb.NewBatch()
	defer b.Close()
	for _, key := range missing {
		rec, found, err := c.read(c.keys[key])
		if err != nil {
			return 0, err
		}
		if !found {
			return 0, fmt.Errorf("%w: record %q of %q vanished during open", ErrCorrupt, c.keys[key], c.Name())
		}
		d := textDocOf(c.cfg, rec.Content, rec.Metadata)
		c.text.Add(key, d)
		b.Set(textKey(c.id, key), bm25.Encode(d), nil)
	}
	for _, k := range orphans {
		b.Delete(k, nil)
	}
	c.loadInfo.textRebuilt = len(missing)
	if damaged > 0 || len(orphans) > 0 {
		c.loadInfo.textDamage = fmt.Sprintf("%d damaged and %d orphaned full-text entries", damaged, len(orphans))
		c.db.logger.Warn("damaged full-text entries rebuilt from the records", "collection", c.Name(), "damage", c.loadInfo.textDamage)
	}
	if err := c.db.commit(b, pebble.Sync, c.Name(), fmt.Sprintf("store full-text entries of %q", c.Name())); err != nil {
		if errors.Is(err, ErrReadOnly) || errors.Is(err, ErrNoSpace) {
			c.db.logger.Warn("full-text entries indexed in memory only", "collection", c.Name(), "records", len(missing), "err", err)
			return len(missing), nil
		}
		return len(missing), err
	}
	return len(missing), nil
}

// verifyText compares the full-text index with the records: each record's
// stored entry must be the analysis of its text, and memory must hold
// exactly the stored entries, with statistics that add up.
func (c *Collection) verifyText(ctx context.Context) []string {
	if c.text == nil {
		return nil
	}
	var ps []string
	bad := func(format string, a ...any) {
		if len(ps) < 20 {
			ps = append(ps, fmt.Sprintf(format, a...))
		}
	}
	df := map[string]int{}
	n, total := 0, uint64(0)
	after := ""
	for {
		if ctx.Err() != nil {
			return ps
		}
		page, next, err := c.scan(after, 1000)
		if err != nil {
			bad("records: %v", err)
			return ps
		}
		for _, r := range page {
			want := textDocOf(c.cfg, r.Content, r.Metadata)
			c.mu.RLock()
			key, ok := c.ids[r.ID]
			c.mu.RUnlock()
			if !ok {
				continue // reported by verifyIndex
			}
			v, closer, err := c.db.pdb.Get(textKey(c.id, key))
			if err != nil {
				bad("record %q: full-text entry: %v", r.ID, err)
			} else {
				d, err := bm25.Decode(v)
				closer.Close()
				if err != nil || !d.Equal(want) {
					bad("record %q: the stored full-text entry is not the analysis of its text", r.ID)
				}
			}
			c.mu.RLock()
			have := c.text.Doc(key)
			c.mu.RUnlock()
			if !have.Equal(want) {
				bad("record %q: the in-memory full-text index does not hold its text", r.ID)
			}
			for _, tf := range want.Terms {
				df[tf.Term]++
			}
			if want.Length > 0 {
				n++
				total += uint64(want.Length)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if st := c.text.Stats(); st.Docs != n || st.TotalLength != total {
		bad("full-text statistics: %d documents of %d terms in all, the records make %d of %d", st.Docs, st.TotalLength, n, total)
	}
	for term, have := range c.text.Terms() {
		if have != df[term] {
			bad("term %q: document frequency %d, the records make %d", term, have, df[term])
		}
	}
	for term, want := range df {
		if _, ok := c.text.DocFreq(term); !ok {
			bad("term %q (in %d records) is not in the full-text index", term, want)
		}
	}
	return ps
}
