package bm25

import (
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
)

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

// docTerm is a term of a record and its frequency there.
type docTerm struct{ id, tf uint32 }

// Index is an in-memory inverted index of documents under dense uint64
// keys, scored by BM25.
//
// An Index is not safe for concurrent use by multiple goroutines when one
// of them writes: Add and Remove need exclusive access, while Search, Doc,
// Added, DocFreq, Terms and Stats may run concurrently with each other
// (each Search takes its scratch from a pool).
type Index struct {
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

// New returns an empty index.
func New() *Index {
	return &Index{dict: make(map[string]uint32)}
}

// grow makes the per-record arrays cover key. They double, from a few
// records: a collection per user or session often holds a handful, and
// each record costs 32 bytes here, so a large minimum would be most of
// what a small collection's text index holds.
func (t *Index) grow(key uint64) {
	if key < uint64(len(t.gens)) {
		return
	}
	n := max(2*uint64(len(t.gens)), key+1, 4)
	t.gens = append(t.gens, make([]uint32, n-uint64(len(t.gens)))...)
	t.lengths = append(t.lengths, make([]uint32, n-uint64(len(t.lengths)))...)
	t.docs = append(t.docs, make([][]docTerm, n-uint64(len(t.docs)))...)
}

// Add indexes d under key, replacing what key held. The per-key arrays
// grow to cover key, so keys should be dense. Add keeps neither d nor its
// Terms slice (new terms' strings are copied); the caller may reuse them.
func (t *Index) Add(key uint64, d Doc) {
	t.Remove(key)
	t.grow(key)
	t.bump(key)
	gen := t.gens[key]
	if len(d.Terms) == 0 {
		return
	}
	ids := make([]docTerm, len(d.Terms))
	for i, tf := range d.Terms {
		id, ok := t.dict[tf.Term]
		if !ok {
			id = uint32(len(t.terms))
			term := strings.Clone(tf.Term)
			t.dict[term] = id
			t.terms = append(t.terms, termPostings{term: term})
		}
		p := &t.terms[id]
		p.list = append(p.list, posting{key: key, tf: tf.TF, gen: gen})
		p.live++
		ids[i] = docTerm{id, tf.TF}
	}
	t.docs[key] = ids
	t.lengths[key] = d.Length
	t.n++
	t.total += uint64(d.Length)
}

// Remove drops key's document; its postings become stale, and a list
// left at least half stale is compacted.
func (t *Index) Remove(key uint64) {
	if key >= uint64(len(t.docs)) || t.docs[key] == nil {
		return
	}
	ids := t.docs[key]
	t.docs[key] = nil
	t.stale += len(ids)
	t.n--
	t.total -= uint64(t.lengths[key])
	t.lengths[key] = 0
	if t.bump(key) { // every list was compacted: key's postings are gone
		for _, dt := range ids {
			t.terms[dt.id].live--
		}
		return
	}
	for _, dt := range ids {
		p := &t.terms[dt.id]
		p.live--
		if len(p.list) >= 16 && p.live < len(p.list)/2 {
			t.compact(p)
		}
	}
}

// bump moves key to its next generation, so that the postings made under
// the current one no longer match. After 2^32 generations the counter
// wraps; then every list is compacted first with key at generation 0,
// which no posting carries, so that all of key's postings are dropped and
// none made under a generation it reuses can match again. It reports
// whether that happened. A key's generation is never left at 0 (see
// Added).
func (t *Index) bump(key uint64) (wrapped bool) {
	if t.gens[key] != math.MaxUint32 {
		t.gens[key]++
		return false
	}
	t.gens[key] = 0
	t.compactAll()
	t.gens[key] = 1
	return true
}

func (t *Index) compact(p *termPostings) {
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

func (t *Index) compactAll() {
	for i := range t.terms {
		t.compact(&t.terms[i])
	}
}

// Added reports whether Add has been called for key, with a document of
// terms or of none. Remove does not undo it.
func (t *Index) Added(key uint64) bool {
	return key < uint64(len(t.gens)) && t.gens[key] != 0
}

// Doc returns the document key holds, its terms sorted, or the zero Doc.
// It allocates the result, which the caller owns.
func (t *Index) Doc(key uint64) Doc {
	if key >= uint64(len(t.docs)) {
		return Doc{}
	}
	var d Doc
	for _, dt := range t.docs[key] {
		d.Terms = append(d.Terms, TermFreq{Term: t.terms[dt.id].term, TF: dt.tf})
	}
	slices.SortFunc(d.Terms, func(a, b TermFreq) int { return strings.Compare(a.Term, b.Term) })
	d.Length = t.lengths[key]
	return d
}

// DocFreq returns the number of documents holding term, and whether term
// is in the index at all: a term stays after the last document holding it
// is removed, with a frequency of 0.
func (t *Index) DocFreq(term string) (df int, ok bool) {
	id, ok := t.dict[term]
	if !ok {
		return 0, false
	}
	return t.terms[id].live, true
}

// Terms yields every term in the index with its document frequency, in no
// particular order, as DocFreq reports them.
func (t *Index) Terms() iter.Seq2[string, int] {
	return func(yield func(string, int) bool) {
		for term, id := range t.dict {
			if !yield(term, t.terms[id].live) {
				return
			}
		}
	}
}

// Stats describes an index's contents and size.
type Stats struct {
	Docs        int    // documents with at least one term: BM25's N
	TotalLength uint64 // the sum of their lengths
	Terms       int    // distinct terms, as Terms yields them
	Postings    int    // posting slots allocated, stale and spare ones included
	Bytes       int64  // an estimate of the memory the index holds
}

// Stats reports the index's statistics and estimates its memory. It walks
// the terms and keys: O(terms + keys).
func (t *Index) Stats() Stats {
	s := Stats{Docs: t.n, TotalLength: t.total, Terms: len(t.dict)}
	for i := range t.terms {
		s.Postings += cap(t.terms[i].list)
	}
	s.Bytes = int64(s.Postings)*16 + int64(len(t.terms))*40 + int64(len(t.gens))*8
	for term := range t.dict {
		s.Bytes += int64(len(term)) + 40 // key, string header, value, map overhead
	}
	for _, ids := range t.docs {
		s.Bytes += int64(cap(ids))*8 + 24
	}
	return s
}
