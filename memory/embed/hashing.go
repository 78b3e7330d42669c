package embed

import (
	"context"
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/mnemodb/mnemo/analysis"
)

// Hashing is the offline default embedder. Version 2 (NewHashing), for
// each text:
//
//  1. takes its terms from package analysis, the analyzer the engine's
//     full-text index uses (Unicode words, lower-cased, Snowball English
//     stems, bigrams for scripts without spaces, English stop words
//     dropped), so both sides of a hybrid query see the same words; a
//     text with no terms but other visible characters ("?", "🙂") uses
//     those characters instead;
//  2. weighs each distinct term by 1 + ln(count);
//  3. hashes terms, adjacent term pairs (pairWeight of a term) and the
//     character 3-grams of each term with boundary marks (gramWeight of
//     the term's weight, shared out across its n-grams) into Dimension
//     signed buckets (FNV-1a; one hash bit picks the sign, so collisions
//     cancel rather than pile up), adding in a fixed order in float64;
//  4. normalises the vector to unit length.
//
// Only empty or whitespace-only text embeds to the zero vector. Hashing
// is deterministic to the bit across runs and platforms, needs no model
// file, and is safe for concurrent use. Version 1 (NewHashingV1) is kept
// so that memories stored with it still open and search.
type Hashing struct {
	dim     int
	version int
}

// DefaultDimension is the dimension of NewHashing(0).
const DefaultDimension = 1024

// Feature weights of version 2, relative to a term's.
const (
	pairWeightV2 = 0.35
	gramWeight   = 0.5
)

// NewHashing returns the offline embedder (version 2) with dim buckets
// (0 means DefaultDimension, 16 to 65536).
func NewHashing(dim int) (*Hashing, error) { return newHashing(2, dim, DefaultDimension) }

// NewHashingV1 returns version 1 of the offline embedder, which
// collections made before version 2 were embedded with (0 means its
// default, 384).
func NewHashingV1(dim int) (*Hashing, error) { return newHashing(1, dim, 384) }

func newHashing(version, dim, def int) (*Hashing, error) {
	if dim == 0 {
		dim = def
	}
	if dim < 16 || dim > 1<<16 {
		return nil, fmt.Errorf("%w: hashing dimension %d, want 16..65536", ErrConfig, dim)
	}
	return &Hashing{dim: dim, version: version}, nil
}

// Offline returns the offline embedder an identity names ("hashing/v2/1024",
// "hashing/v1/384"), or false when it names another embedder: what a
// program needs to embed queries for a collection it did not create.
func Offline(identity string) (*Hashing, bool) {
	var v, dim int
	if n, err := fmt.Sscanf(identity, "hashing/v%d/%d", &v, &dim); n != 2 || err != nil || fmt.Sprintf("hashing/v%d/%d", v, dim) != identity {
		return nil, false
	}
	var h *Hashing
	var err error
	switch v {
	case 1:
		h, err = NewHashingV1(dim)
	case 2:
		h, err = NewHashing(dim)
	default:
		return nil, false
	}
	return h, err == nil
}

// RelatedSimilarity implements Calibrated: 0.05, the cosine similarity
// from which a stored text counts as related to a query. Texts that share
// no word and no character 3-gram have similarity 0 (or a few hundredths
// either way, from hash collisions); sharing one word puts them well
// above 0.05. A higher threshold measurably loses answers, and a neural
// embedder's usual 0.6 returns nothing for most questions
// (docs/performance-notes.md, "Retrieval defaults").
func (h *Hashing) RelatedSimilarity() float32 { return 0.05 }

// Dimension returns the number of buckets.
func (h *Hashing) Dimension() int { return h.dim }

// Identity returns "hashing/v<version>/<dim>". The version changes whenever
// the features change, so stored memories are never compared across
// versions.
func (h *Hashing) Identity() string { return fmt.Sprintf("hashing/v%d/%d", h.version, h.dim) }

// Embed embeds each text; it never fails except on a cancelled context.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (h *Hashing) Vector(text string) []float32 {
	if h.version == 1 {
		return h.vectorV1(text)
	}
	terms := analysis.Terms(text)
	if len(terms) == 0 {
		terms = symbols(text)
	}
	acc := make([]float64, h.dim)
	if len(terms) > 0 {
		var buf []string
		for _, tc := range analysis.Count(terms) {
			w := 1 + math.Log(float64(tc.Count))
			h.add64(acc, "w\x00", tc.Term, "", w)
			buf = appendGrams(buf[:0], tc.Term)
			for _, g := range buf {
				h.add64(acc, "g\x00", g, "", w*gramWeight/float64(len(buf)))
			}
		}
		for i := 1; i < len(terms); i++ {
			h.add64(acc, "b\x00", terms[i-1], terms[i], pairWeightV2)
		}
	}
	var norm float64
	for _, x := range acc {
		norm += x * x
	}
	v := make([]float32, h.dim)
	if norm > 0 {
		inv := 1 / math.Sqrt(norm)
		for i, x := range acc {
			v[i] = float32(x * inv)
		}
	}
	return v
}

// add64 hashes the feature tag+a(+"\x00"+b) into acc with weight w and a
// hash-chosen sign, without building the feature string.
func (h *Hashing) add64(acc []float64, tag, a, b string, w float64) {
	const offset, prime = 14695981039346656037, 1099511628211
	x := uint64(offset)
	for i := 0; i < len(tag); i++ {
		x = (x ^ uint64(tag[i])) * prime
	}
	for i := 0; i < len(a); i++ {
		x = (x ^ uint64(a[i])) * prime
	}
	if b != "" {
		x *= prime // the separator byte 0: x ^ 0 == x
		for i := 0; i < len(b); i++ {
			x = (x ^ uint64(b[i])) * prime
		}
	}
	if x>>63 == 1 {
		w = -w
	}
	acc[(x>>1)%uint64(h.dim)] += w
}

// appendGrams appends the character 3-grams of "<w>" (whole runes).
func appendGrams(dst []string, w string) []string {
	marked := "<" + w + ">"
	if utf8.RuneCountInString(marked) <= 3 {
		return append(dst, marked)
	}
	var idx [4]int // start offsets of the last three runes seen, and the next
	n := 0
	for i := range marked {
		if n >= 3 {
			dst = append(dst, marked[idx[(n-3)%4]:i])
		}
		idx[n%4] = i
		n++
	}
	return append(dst, marked[idx[(n-3)%4]:])
}

// symbols returns the visible characters of a text that has no terms, one
// term each: "?" and "🙂" embed, and embed alike only when they are alike.
func symbols(text string) []string {
	var out []string
	for i, r := range text {
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			continue
		}
		out = append(out, text[i:i+utf8.RuneLen(r)])
	}
	return out
}
