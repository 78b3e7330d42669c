// Package bm25 is the engine's in-memory full-text index: an inverted index
// that scores records by BM25, with the codec of the entry each record's
// analyzed text is stored as. It knows record keys (dense uint64s, as the
// vector index does) and terms, not records, collections or storage: the
// engine stores the entries under 'x' cid key in the same Pebble batch as
// the record, reads them back at open, and feeds them to an Index.
//
// An Index holds, per term, a posting list (the records holding it and
// their term frequencies), per record its length in terms and its distinct
// terms, and the collection statistics BM25 needs (N, total length,
// document frequencies), all kept incrementally by Add and Remove. A
// removed or overwritten record's postings go stale (their generation no
// longer matches the record's) and are dropped when their list is next
// compacted. Search is exact BM25 with MaxScore pruning (search.go).
//
// # The stored entry
//
// Encode and Decode convert a Doc to and from the bytes stored for a
// record:
//
//	+--------+------------------+------------------+-----------------------------------------+
//	| ver u8 | length (uvarint) | count (uvarint)  | count x ( len uvarint | term | tf uvarint ) |
//	+--------+------------------+------------------+-----------------------------------------+
//
// ver is 1. Terms are sorted and distinct, at most mnemo.MaxTextTerms of
// them, each non-empty with a non-zero frequency. length is the record's
// length in terms: the sum of the frequencies, or more when the record had
// more distinct terms than mnemo.MaxTextTerms and kept its most frequent.
package bm25

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/mnemodb/mnemo"
)

const entryVersion = 1

// TermFreq is a term of a document and its frequency there.
type TermFreq struct {
	Term string
	TF   uint32
}

// Doc is a record's analyzed text: its length in terms and its distinct
// terms with their frequencies, sorted by term. The zero Doc has no terms.
type Doc struct {
	Length uint32
	Terms  []TermFreq // sorted by Term, distinct
}

// Equal reports whether d and o have the same length and terms.
func (d Doc) Equal(o Doc) bool {
	return d.Length == o.Length && slices.Equal(d.Terms, o.Terms)
}

// Encode returns d's stored entry, a new slice the caller owns.
func Encode(d Doc) []byte {
	n := 1 + 2*binary.MaxVarintLen32
	for _, t := range d.Terms {
		n += len(t.Term) + 2*binary.MaxVarintLen32
	}
	b := make([]byte, 0, n)
	b = append(b, entryVersion)
	b = binary.AppendUvarint(b, uint64(d.Length))
	b = binary.AppendUvarint(b, uint64(len(d.Terms)))
	for _, t := range d.Terms {
		b = binary.AppendUvarint(b, uint64(len(t.Term)))
		b = append(b, t.Term...)
		b = binary.AppendUvarint(b, uint64(t.TF))
	}
	return b
}

// Decode parses a stored entry, treating every byte as hostile: each
// length and count is checked against the bytes present before anything
// is allocated, and an entry that breaks a rule of the format returns
// ErrMalformed. The Doc does not refer to b, which the caller may reuse.
func Decode(b []byte) (Doc, error) {
	if len(b) < 1 || b[0] != entryVersion {
		return Doc{}, ErrMalformed
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
		return Doc{}, ErrMalformed
	}
	d := Doc{Length: uint32(length), Terms: make([]TermFreq, 0, count)}
	var sum uint64
	for range count {
		l, ok := uv()
		if !ok || l == 0 || l > uint64(len(b)) {
			return Doc{}, ErrMalformed
		}
		term := string(b[:l])
		b = b[l:]
		tf, ok := uv()
		if !ok || tf == 0 || tf > math.MaxUint32 {
			return Doc{}, ErrMalformed
		}
		if n := len(d.Terms); n > 0 && d.Terms[n-1].Term >= term {
			return Doc{}, ErrMalformed
		}
		d.Terms = append(d.Terms, TermFreq{term, uint32(tf)})
		sum += tf
	}
	if len(b) != 0 || sum > length {
		return Doc{}, ErrMalformed
	}
	return d, nil
}
