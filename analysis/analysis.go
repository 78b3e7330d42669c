// Package analysis turns text into terms: the one analyzer that mnemo's
// full-text index and its offline embedder share, so a word means the same
// to both sides of a hybrid query.
//
// The rules (Version names them; terms for the same text change only with
// a new Version):
//
//   - Words are maximal runs of letters, digits and combining marks (Unicode
//     categories L, N, M). An apostrophe (' or U+2019) between two letters
//     joins them ("don't", "O'Brien"). Everything else separates words,
//     and so does every byte that is not valid UTF-8.
//   - Words are lower-cased (Unicode simple case folding to lower case).
//   - Words of Latin script are reduced to their stem by the Snowball English
//     (Porter2) stemmer: "running", "runs" and "run" are one term.
//   - Scripts written without spaces between words (Han, Hiragana, Katakana,
//     Hangul, Thai, Lao, Khmer, Myanmar) are cut into overlapping character
//     bigrams ("東京都" gives "東京", "京都"); a run of one such character is
//     one term. Such a run inside a word ends the word before it.
//   - Words longer than MaxTermBytes bytes (after lower-casing) are dropped:
//     they are encoded data, not language.
//   - English stop words (StopWords: "the", "is", "what", ...) are dropped.
//     BM25's inverse document frequency already makes them cheap, but not
//     free: they lengthen short texts and match every question's "what
//     did"; dropping them measurably raised BM25's retrieval quality
//     (docs/performance-notes.md, "Retrieval defaults"). The price is
//     the usual one: a query made only of stop words ("The Who") has no
//     terms.
//
// Text with no letter or digit ("?", "🙂", "") has no terms.
package analysis

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Version identifies the analysis rules. A full-text index records the
// version that built it.
const Version = "v1"

// MaxTermBytes is the longest term kept, in bytes.
const MaxTermBytes = 64

// Terms returns the terms of text in order of appearance, repeats kept.
func Terms(text string) []string { return AppendTerms(nil, text) }

// AppendTerms appends the terms of text to dst and returns it.
func AppendTerms(dst []string, text string) []string {
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			i += max(n, 1)
		case unbroken(r):
			start := i
			i += n
			for i < len(text) {
				r, n := utf8.DecodeRuneInString(text[i:])
				if r == utf8.RuneError && n <= 1 || !unbroken(r) && !unicode.IsMark(r) {
					break
				}
				i += n
			}
			dst = appendBigrams(dst, text[start:i])
		case wordRune(r):
			start := i
			i += n
			for i < len(text) {
				r, n := utf8.DecodeRuneInString(text[i:])
				if r == utf8.RuneError && n <= 1 || unbroken(r) {
					break
				}
				if wordRune(r) {
					i += n
					continue
				}
				if (r == '\'' || r == '\u2019') && i+n < len(text) {
					// An apostrophe joins two letters.
					prev, _ := utf8.DecodeLastRuneInString(text[start:i])
					next, _ := utf8.DecodeRuneInString(text[i+n:])
					if unicode.IsLetter(prev) && unicode.IsLetter(next) && !unbroken(next) {
						i += n
						continue
					}
				}
				break
			}
			if t := word(text[start:i]); t != "" {
				dst = append(dst, t)
			}
		default:
			i += n
		}
	}
	return dst
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// unbroken reports whether r belongs to a script written without spaces
// between words.
func unbroken(r rune) bool {
	if r < 0x0e00 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// word lower-cases and stems one word; "" drops it.
func word(w string) string {
	w = strings.ToLower(strings.ReplaceAll(w, "\u2019", "'"))
	if len(w) > MaxTermBytes || stopWords[w] {
		return ""
	}
	if latin(w) {
		w = stem(w)
	}
	return w
}

// latin reports whether w has a letter and every letter is of Latin script.
func latin(w string) bool {
	letter := false
	for _, r := range w {
		if unicode.IsLetter(r) {
			if r >= utf8.RuneSelf && !unicode.Is(unicode.Latin, r) {
				return false
			}
			letter = true
		}
	}
	return letter
}

// stem applies the Snowball English stemmer. Stop words are stemmed like
// any word ("was" and "is" stay themselves either way). Stemming costs
// most of a word's analysis (docs/performance-notes.md), so stems are
// cached: a fixed table of recent words, lock-free, where a collision
// just replaces the slot.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	slot := &stems[maphash.String(stemSeed, w)%uint64(len(stems))]
	if e := slot.Load(); e != nil && e.word == w {
		return e.stem
	}
	s := english.Stem(w, true)
	slot.Store(&stemEntry{word: w, stem: s})
	return s
}

type stemEntry struct{ word, stem string }

var (
	stemSeed = maphash.MakeSeed()
	stems    [1 << 15]atomic.Pointer[stemEntry]
)

// appendBigrams appends the overlapping character bigrams of a run of an
// unbroken script (a combining mark stays with its base character); a run of
// one character is one term.
func appendBigrams(dst []string, run string) []string {
	run = strings.ToLower(run)
	var buf [64]int
	starts := buf[:0]
	for i, r := range run {
		if i == 0 || !unicode.IsMark(r) {
			starts = append(starts, i)
		}
	}
	if len(starts) == 1 {
		return append(dst, run)
	}
	starts = append(starts, len(run))
	for i := 0; i+2 < len(starts); i++ {
		dst = append(dst, run[starts[i]:starts[i+2]])
	}
	return dst
}

// StopWords are the English words the analyzer drops: the common function
// words (articles, pronouns, auxiliaries, prepositions, conjunctions).
const StopWords = `a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself just me
more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those through to
too under until up very was we were what when where which while who whom why will with would you your
yours yourself yourselves`

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(StopWords) {
		m[w] = true
	}
	return m
}()

// TermCount is a distinct term and how often it occurs.
type TermCount struct {
	Term  string
	Count int
}

// Count returns the distinct terms of terms with their counts, sorted by
// term. terms is not modified.
func Count(terms []string) []TermCount {
	sorted := slices.Clone(terms)
	slices.Sort(sorted)
	var out []TermCount
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		out = append(out, TermCount{sorted[i], j - i})
		i = j
	}
	return out
}
