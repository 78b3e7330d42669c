package engine

import (
	"github.com/mnemodb/mnemo"

	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/mnemodb/mnemo/analysis"
)

// The full-text index. Each record's analyzed text (its length in terms and
// each distinct term with its frequency) is stored under 'x' cid key, in
// the same Pebble batch as the record, so it is exactly as durable as the
// record and needs no log replay of its own. Memory holds the inverted
// index built from those entries: postings per term, document lengths and
// the collection statistics BM25 needs (N, total length, document
// frequencies), all kept incrementally as records are written and deleted.
// The collection's lock (c.mu) protects it.
//
// A stored entry:
//
//	+--------+------------------+------------------+-----------------------------------------+
//	| ver u8 | length (uvarint) | count (uvarint)  | count x ( len uvarint | term | tf uvarint ) |
//	+--------+------------------+------------------+-----------------------------------------+
//
// Terms are sorted and distinct; length is the sum of the frequencies.

const textEntryVersion = 1

type termFreq struct {
	term string
	tf   uint32
}

// textDoc is a record's analyzed text.
type textDoc struct {
	length uint32
	terms  []termFreq // sorted by term, distinct
}

// textDocOf is what the full-text index holds for a record of a
// collection with config cfg: mnemo.TextTerms, which every backend
// indexes.
func textDocOf(cfg mnemo.CollectionConfig, content string, meta map[string]any) textDoc {
	terms, freqs, length := mnemo.TextTerms(cfg, content, meta)
	if length == 0 {
		return textDoc{}
	}
	doc := textDoc{length: uint32(min(length, math.MaxUint32)), terms: make([]termFreq, len(terms))}
	for i, t := range terms {
		doc.terms[i] = termFreq{t, uint32(freqs[i])}
	}
	return doc
}

// analyzeDoc analyzes text as the content of a record of a collection with
// the default text config.
func analyzeDoc(text string) textDoc { return textDocOf(mnemo.CollectionConfig{}, text, nil) }

func encodeTextDoc(d textDoc) []byte {
	n := 1 + 2*binary.MaxVarintLen32
	for _, t := range d.terms {
		n += len(t.term) + 2*binary.MaxVarintLen32
	}
	b := make([]byte, 0, n)
	b = append(b, textEntryVersion)
	b = binary.AppendUvarint(b, uint64(d.length))
	b = binary.AppendUvarint(b, uint64(len(d.terms)))
	for _, t := range d.terms {
		b = binary.AppendUvarint(b, uint64(len(t.term)))
		b = append(b, t.term...)
		b = binary.AppendUvarint(b, uint64(t.tf))
	}
	return b
}

var errTextEntry = errors.New("malformed full-text entry")

// decodeTextDoc parses a stored entry; every length is checked against the
// bytes present.
func decodeTextDoc(b []byte) (textDoc, error) {
	if len(b) < 1 || b[0] != textEntryVersion {
		return textDoc{}, errTextEntry
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	length, ok1 := uv()
	count, ok2 := uv()
	if !ok1 || !ok2 || length > math.MaxUint32 || count > mnemo.MaxTextTerms || count > uint64(len(b))/2 {
		return textDoc{}, errTextEntry
	}
	d := textDoc{length: uint32(length), terms: make([]termFreq, 0, count)}
	var sum uint64
	for range count {
		l, ok := uv()
		if !ok || l == 0 || l > uint64(len(b)) {
			return textDoc{}, errTextEntry
		}
		term := string(b[:l])
		b = b[l:]
		tf, ok := uv()
		if !ok || tf == 0 || tf > math.MaxUint32 {
			return textDoc{}, errTextEntry
		}
		if n := len(d.terms); n > 0 && d.terms[n-1].term >= term {
			return textDoc{}, errTextEntry
		}
		d.terms = append(d.terms, termFreq{term, uint32(tf)})
		sum += tf
	}
	if len(b) != 0 || sum > length {
		return textDoc{}, errTextEntry
	}
	return d, nil
}

func (d textDoc) equal(o textDoc) bool {
	return d.length == o.length && slices.Equal(d.terms, o.terms)
}

// posting is one record's occurrence of a term. gen is the record's
// generation when the posting was made: a posting whose gen is not the
// record's current one is stale (the record was overwritten or deleted)
// and is skipped, and dropped when its list is next compacted.
type posting struct {
	key uint64
	tf  uint32
	gen uint32
}

type termPostings struct {
	term string
	list []posting
	live int // postings that are not stale: the document frequency
}

// textIndex is the in-memory inverted index.
// docTerm is a term of a record and its frequency there.
type docTerm struct{ id, tf uint32 }

type textIndex struct {
	dict  map[string]uint32 // term -> index in terms
	terms []termPostings
	// Per record key (keys are dense): the current generation (0: no
	// text), length in terms, and distinct terms with their frequencies.
	gens    []uint32
	lengths []uint32
	docs    [][]docTerm
	n       int    // records with at least one term
	total   uint64 // sum of their lengths
	stale   int    // stale postings, all lists
	scratch sync.Pool
}

func newTextIndex() *textIndex {
	return &textIndex{dict: make(map[string]uint32)}
}

// grow makes the per-record arrays cover key. They double, from a few
// records: a collection per user or session often holds a handful, and
// each record costs 32 bytes here, so a large minimum would be most of
// what a small collection's text index holds.
func (t *textIndex) grow(key uint64) {
	if key < uint64(len(t.gens)) {
		return
	}
	n := max(2*uint64(len(t.gens)), key+1, 4)
	t.gens = append(t.gens, make([]uint32, n-uint64(len(t.gens)))...)
	t.lengths = append(t.lengths, make([]uint32, n-uint64(len(t.lengths)))...)
	t.docs = append(t.docs, make([][]docTerm, n-uint64(len(t.docs)))...)
}

// add indexes a record's text under key, replacing what key held.
func (t *textIndex) add(key uint64, d textDoc) {
	t.remove(key)
	t.grow(key)
	gen := t.gens[key] + 1
	if gen == 0 { // wrapped after 2^32 overwrites: no stale posting may match
		t.compactAll()
		gen = 1
	}
	t.gens[key] = gen
	if len(d.terms) == 0 {
		return
	}
	ids := make([]docTerm, len(d.terms))
	for i, tf := range d.terms {
		id, ok := t.dict[tf.term]
		if !ok {
			id = uint32(len(t.terms))
			term := strings.Clone(tf.term)
			t.dict[term] = id
			t.terms = append(t.terms, termPostings{term: term})
		}
		p := &t.terms[id]
		p.list = append(p.list, posting{key: key, tf: tf.tf, gen: gen})
		p.live++
		ids[i] = docTerm{id, tf.tf}
	}
	t.docs[key] = ids
	t.lengths[key] = d.length
	t.n++
	t.total += uint64(d.length)
}

// remove drops key's text; its postings become stale.
func (t *textIndex) remove(key uint64) {
	if key >= uint64(len(t.docs)) || t.docs[key] == nil {
		return
	}
	ids := t.docs[key]
	t.docs[key] = nil
	t.gens[key]++ // the old postings no longer match
	for _, dt := range ids {
		p := &t.terms[dt.id]
		p.live--
		if len(p.list) >= 16 && p.live < len(p.list)/2 {
			t.compact(p)
		}
	}
	t.stale += len(ids)
	t.n--
	t.total -= uint64(t.lengths[key])
	t.lengths[key] = 0
}

func (t *textIndex) compact(p *termPostings) {
	kept := p.list[:0]
	for _, x := range p.list {
		if t.gens[x.key] == x.gen {
			kept = append(kept, x)
		}
	}
	t.stale -= len(p.list) - len(kept)
	clear(p.list[len(kept):])
	p.list = slices.Clip(kept)
	if cap(p.list) > 2*len(p.list)+8 {
		p.list = slices.Clone(p.list)
	}
}

func (t *textIndex) compactAll() {
	for i := range t.terms {
		t.compact(&t.terms[i])
	}
}

type textResult struct {
	key   uint64
	score float64
}

// idf is BM25's inverse document frequency in its non-negative form
// (Lucene's): ln(1 + (N - df + 0.5) / (df + 0.5)).
func idf(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// search scores every record holding a query term by BM25 and returns the
// k best that admit accepts (nil: all), best first, ties by key. The
// caller holds the collection lock (shared).
//
// Terms are scored rarest first, a whole posting list at a time, into a
// dense accumulator. A term's contribution to any record is below its
// bound idf*qtf*(k1+1); once the k-th best score so far exceeds the sum of
// the bounds of the terms left (MaxScore), no record those terms alone
// hold can reach the top k, so their long lists are not walked: the
// records already scored that could still make it look their remaining
// terms up in their own term lists. The result is exact.
func (t *textIndex) search(query []string, k int, p mnemo.BM25, admit func(uint64) bool) []textResult {
	if k <= 0 || t.n == 0 || len(query) == 0 {
		return nil
	}
	type qterm struct {
		id     uint32
		qtf    float64
		weight float64 // idf * qtf * (k1+1): also the term's bound
		df     int
	}
	var qs []qterm
	for _, tc := range analysis.Count(query) {
		if id, ok := t.dict[tc.Term]; ok && t.terms[id].live > 0 {
			df := t.terms[id].live
			q := float64(tc.Count)
			qs = append(qs, qterm{id, q, idf(t.n, df) * q * (p.K1 + 1), df})
		}
	}
	if len(qs) == 0 {
		return nil
	}
	slices.SortStableFunc(qs, func(a, b qterm) int { return a.df - b.df })
	rest := make([]float64, len(qs)+1) // rest[i]: the bounds of terms i.. summed
	postings := make([]int, len(qs)+1) // and their list lengths
	for i := len(qs) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + qs[i].weight
		postings[i] = postings[i+1] + len(t.terms[qs[i].id].list)
	}
	acc := t.accumulator()
	defer t.scratch.Put(acc)
	avg := float64(t.total) / float64(t.n)
	k1a, k1b := p.K1*(1-p.B), p.K1*p.B/avg
	norm := func(key uint64) float64 { return k1a + k1b*float64(t.lengths[key]) }
	theta, best := 0.0, 0.0
	cut := len(qs) // terms cut.. are looked up, not walked
	for i, q := range qs {
		// The k-th best is at most the best, which must beat the bounds
		// left; finding it costs a pass over the records scored so far,
		// which pays when the lists left are longer.
		if best > rest[i] && len(acc.touched) >= k && 2*len(acc.touched) < postings[i] {
			theta = kthScore(acc, k, admit)
			if theta > rest[i] {
				cut = i
				break
			}
		}
		tp := &t.terms[q.id]
		gens, lengths, score, w := t.gens, t.lengths, acc.score, q.weight
		fresh := tp.live == len(tp.list) // no stale posting: skip the check
		for _, x := range tp.list {
			if !fresh && gens[x.key] != x.gen {
				continue
			}
			tf := float64(x.tf)
			v := w * tf / (tf + k1a + k1b*float64(lengths[x.key]))
			old := score[x.key]
			if old == 0 {
				acc.touched = append(acc.touched, x.key)
			}
			score[x.key] = old + v
			best = max(best, old+v)
		}
	}
	if cut < len(qs) {
		theta = kthScore(acc, k, admit) // raised by the last list walked
		left := qs[cut:]
		for _, key := range acc.touched {
			if acc.score[key]+rest[cut] < theta {
				continue // cannot reach the top k
			}
			n := norm(key)
			for _, dt := range t.docs[key] {
				for _, q := range left {
					if q.id == dt.id {
						tf := float64(dt.tf)
						acc.score[key] += q.weight * tf / (tf + n)
					}
				}
			}
		}
	}
	h := make(textHeap, 0, min(k, len(acc.touched))+1)
	for _, key := range acc.touched {
		s := acc.score[key]
		acc.score[key] = 0
		if len(h) == k && !better(textResult{key, s}, h[0]) {
			continue
		}
		if admit != nil && !admit(key) {
			continue
		}
		h.push(textResult{key, s}, k)
	}
	acc.touched = acc.touched[:0]
	out := []textResult(h)
	slices.SortFunc(out, func(a, b textResult) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// kthScore returns the k-th best score among the records scored so far
// that admit accepts, or 0 when fewer than k are.
func kthScore(acc *textAcc, k int, admit func(uint64) bool) float64 {
	h := acc.heap[:0]
	for _, key := range acc.touched {
		s := acc.score[key]
		if len(h) == k && s <= h[0].score {
			continue
		}
		if admit != nil && !admit(key) {
			continue
		}
		h.push(textResult{key, s}, k)
	}
	acc.heap = h
	if len(h) < k {
		return 0
	}
	return h[0].score
}

type textAcc struct {
	score   []float64
	touched []uint64
	heap    textHeap
}

func (t *textIndex) accumulator() *textAcc {
	acc, _ := t.scratch.Get().(*textAcc)
	if acc == nil {
		acc = &textAcc{}
	}
	if len(acc.score) < len(t.gens) {
		acc.score = make([]float64, len(t.gens))
	}
	return acc
}

// better orders results: higher score first, then lower key.
func better(a, b textResult) bool {
	return a.score > b.score || a.score == b.score && a.key < b.key
}

// textHeap is a min-heap (worst at the root) of at most k results.
type textHeap []textResult

func (h *textHeap) push(r textResult, k int) {
	if len(*h) < k {
		*h = append(*h, r)
		s := *h
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(s[p], s[i]) {
				break
			}
			s[p], s[i] = s[i], s[p]
			i = p
		}
		return
	}
	s := *h
	s[0] = r
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(s) && better(s[m], s[l]) {
			m = l
		}
		if l+1 < len(s) && better(s[m], s[l+1]) {
			m = l + 1
		}
		if m == i {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// stats reports the index's size and estimates its memory.
func (t *textIndex) stats() (terms, postings int, bytes int64) {
	for i := range t.terms {
		postings += cap(t.terms[i].list)
	}
	bytes = int64(postings)*16 + int64(len(t.terms))*40 + int64(len(t.gens))*8
	for term := range t.dict {
		bytes += int64(len(term)) + 40 // key, string header, value, map overhead
	}
	for _, ids := range t.docs {
		bytes += int64(cap(ids))*8 + 24
	}
	return len(t.dict), postings, bytes
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
	prefix := cidPrefix(tagText, c.id)
	it, err := c.db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return err
	}
	var orphans [][]byte
	damaged := 0
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()[len(prefix):]
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return readError(fmt.Sprintf("read full-text entries of %q", c.name), err)
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
		d, err := decodeTextDoc(v)
		if err != nil {
			damaged++
			continue
		}
		c.text.add(key, d)
	}
	if err := it.Close(); err != nil {
		return readError(fmt.Sprintf("read full-text entries of %q", c.name), err)
	}
	var missing []uint64
	for key := range c.keys {
		if key >= uint64(len(c.text.gens)) || c.text.gens[key] == 0 {
			missing = append(missing, key)
		}
	}
	if len(missing) == 0 && len(orphans) == 0 {
		return nil
	}
	slices.Sort(missing)
	b := c.db.pdb.NewBatch()
	defer b.Close()
	for _, key := range missing {
		rec, found, err := c.read(c.keys[key])
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: record %q of %q vanished during open", ErrCorrupt, c.keys[key], c.name)
		}
		d := textDocOf(c.cfg, rec.Content, rec.Metadata)
		c.text.add(key, d)
		b.Set(textKey(c.id, key), encodeTextDoc(d), nil)
	}
	for _, k := range orphans {
		b.Delete(k, nil)
	}
	c.loadInfo.textRebuilt = len(missing)
	if damaged > 0 || len(orphans) > 0 {
		c.loadInfo.textDamage = fmt.Sprintf("%d damaged and %d orphaned full-text entries", damaged, len(orphans))
		c.db.logf("collection %q: %s rebuilt from the records", c.name, c.loadInfo.textDamage)
	}
	if err := c.db.commit(b, pebble.Sync, fmt.Sprintf("store full-text entries of %q", c.name)); err != nil {
		if errors.Is(err, ErrReadOnly) || errors.Is(err, ErrNoSpace) {
			c.db.logf("collection %q: full-text entries of %d records indexed in memory only: %v", c.name, len(missing), err)
			return nil
		}
		return err
	}
	return nil
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
				d, err := decodeTextDoc(v)
				closer.Close()
				if err != nil || !d.equal(want) {
					bad("record %q: the stored full-text entry is not the analysis of its text", r.ID)
				}
			}
			c.mu.RLock()
			t := c.text
			var have []termFreq
			var terms []docTerm
			if key < uint64(len(t.docs)) {
				terms = t.docs[key]
			}
			for _, dt := range terms {
				have = append(have, termFreq{term: t.terms[dt.id].term, tf: dt.tf})
			}
			length := uint32(0)
			if key < uint64(len(t.lengths)) {
				length = t.lengths[key]
			}
			c.mu.RUnlock()
			wantTerms := want.terms
			slices.SortFunc(have, func(a, b termFreq) int { return strings.Compare(a.term, b.term) })
			if !slices.Equal(have, wantTerms) || length != want.length {
				bad("record %q: the in-memory full-text index does not hold its text", r.ID)
			}
			for _, tf := range want.terms {
				df[tf.term]++
			}
			if want.length > 0 {
				n++
				total += uint64(want.length)
			}
		}
		if next == "" {
			break
		}
		after = next
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	t := c.text
	if t.n != n || t.total != total {
		bad("full-text statistics: %d documents of %d terms in all, the records make %d of %d", t.n, t.total, n, total)
	}
	for term, id := range t.dict {
		if t.terms[id].live != df[term] {
			bad("term %q: document frequency %d, the records make %d", term, t.terms[id].live, df[term])
		}
	}
	for term, want := range df {
		if _, ok := t.dict[term]; !ok {
			bad("term %q (in %d records) is not in the full-text index", term, want)
		}
	}
	return ps
}
