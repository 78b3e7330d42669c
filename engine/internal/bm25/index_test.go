package bm25

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the randomized tests (0: from the clock)")

// newRand returns the randomized tests' source, its seed logged.
func newRand(t *testing.T) *rand.Rand {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed %d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed))
}

var vocab = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega apple banana cherry date elder fig grape")

// randomDoc draws a document over vocab: skewed, so that early words are
// common (long posting lists) and late ones rare; sometimes no terms, and
// sometimes a length above the frequencies' sum, as a record that kept
// only its most frequent terms has.
func randomDoc(r *rand.Rand) Doc {
	if r.IntN(12) == 0 {
		return Doc{}
	}
	tfs := map[string]uint32{}
	for range 1 + r.IntN(14) {
		tfs[vocab[r.IntN(r.IntN(len(vocab))+1)]] += uint32(1 + r.IntN(r.IntN(4)+1))
	}
	var d Doc
	for term, tf := range tfs {
		d.Terms = append(d.Terms, TermFreq{term, tf})
		d.Length += tf
	}
	slices.SortFunc(d.Terms, func(a, b TermFreq) int { return strings.Compare(a.Term, b.Term) })
	if r.IntN(8) == 0 {
		d.Length += uint32(r.IntN(50))
	}
	return d
}

// randomOps applies n random adds, overwrites and removes over keys
// [0, keys) to idx and to model (the live documents), checking idx
// against model every so often.
func randomOps(t *testing.T, r *rand.Rand, idx *Index, model map[uint64]Doc, n, keys int) {
	t.Helper()
	for i := range n {
		key := uint64(r.IntN(keys))
		if r.IntN(4) == 0 {
			idx.Remove(key)
			delete(model, key)
		} else {
			d := randomDoc(r)
			idx.Add(key, d)
			model[key] = d
		}
		if i%97 == 0 {
			check(t, idx, model)
		}
	}
	check(t, idx, model)
}

// check verifies idx's invariants and that it holds exactly model: each
// key's document, the statistics, every term's document frequency and
// posting list (live postings are exactly the documents' terms; the rest
// are counted stale).
func check(t *testing.T, idx *Index, model map[uint64]Doc) {
	t.Helper()
	if err := checkIndex(idx, model); err != nil {
		t.Fatal(err)
	}
}

func checkIndex(idx *Index, model map[uint64]Doc) error {
	n, total, df := 0, uint64(0), map[string]int{}
	for key, d := range model {
		if !idx.Added(key) {
			return fmt.Errorf("key %d: not Added", key)
		}
		if have := idx.Doc(key); !have.Equal(d) && !(len(d.Terms) == 0 && have.Equal(Doc{})) {
			return fmt.Errorf("key %d holds %+v, want %+v", key, have, d)
		}
		if len(d.Terms) > 0 {
			n++
			total += uint64(d.Length)
		}
		for _, tf := range d.Terms {
			df[tf.Term]++
		}
	}
	for key := range uint64(len(idx.docs)) {
		if _, ok := model[key]; !ok && (idx.docs[key] != nil || idx.lengths[key] != 0) {
			return fmt.Errorf("key %d: removed, but holds %+v", key, idx.Doc(key))
		}
	}
	st := idx.Stats()
	if st.Docs != n || st.TotalLength != total || idx.n != n || idx.total != total {
		return fmt.Errorf("stats %+v, want %d documents of total length %d", st, n, total)
	}
	stale := 0
	for id, p := range idx.terms {
		if idx.dict[p.term] != uint32(id) {
			return fmt.Errorf("term %q: id %d, the dictionary says %d", p.term, id, idx.dict[p.term])
		}
		live := 0
		for _, x := range p.list {
			if idx.gens[x.key] != x.gen {
				continue
			}
			live++
			if i := slices.IndexFunc(model[x.key].Terms, func(tf TermFreq) bool { return tf.Term == p.term }); i < 0 || model[x.key].Terms[i].TF != x.tf {
				return fmt.Errorf("term %q: a live posting of key %d (tf %d) its document does not have", p.term, x.key, x.tf)
			}
		}
		if live != p.live || live != df[p.term] {
			return fmt.Errorf("term %q: %d live postings, counted %d, the documents make %d", p.term, live, p.live, df[p.term])
		}
		if got, ok := idx.DocFreq(p.term); !ok || got != live {
			return fmt.Errorf("term %q: DocFreq %d, %v, want %d", p.term, got, ok, live)
		}
		stale += len(p.list) - live
	}
	if stale != idx.stale {
		return fmt.Errorf("%d stale postings, counted %d", stale, idx.stale)
	}
	terms := 0
	for term, d := range idx.Terms() {
		terms++
		if d != df[term] {
			return fmt.Errorf("Terms: %q has %d, want %d", term, d, df[term])
		}
	}
	if terms != len(idx.terms) || st.Terms != terms {
		return fmt.Errorf("Terms yields %d terms, Stats says %d, the index has %d", terms, st.Terms, len(idx.terms))
	}
	for term := range df {
		if _, ok := idx.DocFreq(term); !ok {
			return fmt.Errorf("term %q is not in the index", term)
		}
	}
	return nil
}

func TestIndexBasics(t *testing.T) {
	idx := New()
	if idx.Added(0) || idx.Added(1<<40) {
		t.Fatal("an empty index has a key")
	}
	a, b := docOf("Zebra crossings, zebra stripes"), docOf("a crossing")
	idx.Add(3, a)
	idx.Add(1, b)
	idx.Add(2, Doc{})
	check(t, idx, map[uint64]Doc{3: a, 1: b, 2: {}})
	if !idx.Added(2) || idx.Added(0) || idx.Added(4) {
		t.Fatalf("Added: 2 %v, 0 %v, 4 %v; want true, false, false", idx.Added(2), idx.Added(0), idx.Added(4))
	}
	if df, ok := idx.DocFreq("cross"); !ok || df != 2 {
		t.Fatalf("DocFreq(cross) = %d, %v", df, ok)
	}
	if _, ok := idx.DocFreq("horse"); ok {
		t.Fatal("DocFreq(horse): found")
	}
	idx.Remove(3)
	idx.Remove(3)
	idx.Remove(99)
	check(t, idx, map[uint64]Doc{1: b, 2: {}})
	if !idx.Added(3) {
		t.Fatal("Remove undid Added")
	}
	// A term outlives its documents, with a frequency of 0.
	if df, ok := idx.DocFreq("zebra"); !ok || df != 0 {
		t.Fatalf("DocFreq(zebra) after its document was removed = %d, %v", df, ok)
	}
	if st := idx.Stats(); st.Docs != 1 || st.TotalLength != uint64(b.Length) || st.Postings < 3 || st.Bytes <= 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestIndexAddKeepsNothing: Add copies what it keeps, so the caller may
// reuse a Doc's terms.
func TestIndexAddKeepsNothing(t *testing.T) {
	idx := New()
	buf := []byte("apple")
	d := Doc{Length: 1, Terms: []TermFreq{{string(buf), 1}}}
	idx.Add(0, d)
	d.Terms[0] = TermFreq{"pear", 9}
	if got := idx.Doc(0); !got.Equal(Doc{Length: 1, Terms: []TermFreq{{"apple", 1}}}) {
		t.Fatalf("the index holds %+v after the caller reused its Doc", got)
	}
}

// TestIndexModel: random adds, overwrites and removes keep the index equal
// to a map of the live documents.
func TestIndexModel(t *testing.T) {
	r := newRand(t)
	for _, keys := range []int{1, 5, 50, 500} {
		t.Run(fmt.Sprint("keys=", keys), func(t *testing.T) {
			randomOps(t, r, New(), map[uint64]Doc{}, 3000, keys)
		})
	}
}

// TestCompaction: overwriting a record again and again leaves a bounded
// number of stale postings, as lists at least half stale are compacted.
func TestCompaction(t *testing.T) {
	idx := New()
	model := map[uint64]Doc{}
	for key := range uint64(10) {
		model[key] = docOf("common words here")
		idx.Add(key, model[key])
	}
	for i := range 10000 {
		key := uint64(i % 3)
		model[key] = docOf(fmt.Sprintf("common words again %d", i%7))
		idx.Add(key, model[key])
	}
	check(t, idx, model)
	made := 0
	for _, p := range idx.terms {
		// Compacted when a remove leaves it at least 16 long and less
		// than half live; the add after it appends one.
		if len(p.list) > max(16, 2*p.live+1)+1 {
			t.Errorf("term %q: %d postings for %d live", p.term, len(p.list), p.live)
		}
		made += len(p.list)
	}
	if st := idx.Stats(); st.Postings > 4*made+8*len(idx.terms) {
		t.Errorf("%d posting slots for %d postings", st.Postings, made)
	}
}

// TestGenerationWrap: when a key's generation wraps, the stale postings
// made under the generations it reuses are dropped first, so none of them
// matches again.
func TestGenerationWrap(t *testing.T) {
	idx := New()
	old, fresh := docOf("stale words"), docOf("fresh words")
	idx.Add(0, old)              // generation 1
	idx.Add(0, Doc{})            // its postings are stale
	idx.Add(1, old)              // keeps the lists alive
	idx.gens[0] = math.MaxUint32 // as after 2^32 writes of no terms
	idx.Add(0, fresh)            // generation 0+1 = 1 again
	model := map[uint64]Doc{0: fresh, 1: old}
	check(t, idx, model)
	got := idx.Search([]string{"stale"}, 10, defaultParams, nil)
	if len(got) != 1 || got[0].Key != 1 {
		t.Fatalf("search for the old text: %+v, want key 1 only", got)
	}
}

// TestGenerationWrapInRemove: the generation also wraps when Remove
// retires a document held at the last generation; the generations it
// reuses must not revive postings made under them long before.
func TestGenerationWrapInRemove(t *testing.T) {
	idx := New()
	old := docOf("stale words")
	idx.Add(0, old)                  // generation 1: postings that go stale
	idx.Add(0, Doc{})                // no terms; "stale" keeps a short list
	idx.Add(1, old)                  // keeps the lists alive
	idx.gens[0] = math.MaxUint32 - 1 // as after 2^32 writes
	idx.Add(0, docOf("fresh one"))   // held at the last generation
	if !idx.Added(0) {
		t.Fatal("Added(0) false after Add")
	}
	idx.Remove(0) // wraps
	if !idx.Added(0) {
		t.Fatal("Added(0) false after Remove: Remove does not undo Add")
	}
	idx.Add(0, docOf("fresh two"))
	check(t, idx, map[uint64]Doc{0: docOf("fresh two"), 1: old})
	got := idx.Search([]string{"stale"}, 10, defaultParams, nil)
	if len(got) != 1 || got[0].Key != 1 {
		t.Fatalf("search for the old text: %+v, want key 1 only", got)
	}
}
