package embed

import (
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// vectorV1 embeds one text by the rules of hashing/v1 (see NewHashingV1).
func (h *Hashing) vectorV1(text string) []float32 {
	v := make([]float32, h.dim)
	words := tokenize(text)
	counts := make(map[string]int, len(words))
	for _, w := range words {
		counts[w]++
	}
	// Sorted, so colliding features add up in one order: the same
	// vector to the bit on every run.
	for _, w := range slices.Sorted(maps.Keys(counts)) {
		n := counts[w]
		wt := 1 + float32(math.Log(float64(n)))
		if stopWords[w] {
			wt *= 0.25
		}
		h.add(v, "w\x00"+w, wt)
		grams := ngrams(w)
		for _, g := range grams {
			h.add(v, "g\x00"+g, wt/3/float32(len(grams)))
		}
	}
	for i := 1; i < len(words); i++ {
		wt := float32(pairWeight)
		if stopWords[words[i-1]] || stopWords[words[i]] {
			wt *= 0.25
		}
		h.add(v, "b\x00"+words[i-1]+"\x00"+words[i], wt)
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm > 0 {
		inv := float32(1 / math.Sqrt(norm))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// add hashes feature f into v with weight w and a hash-chosen sign.
func (h *Hashing) add(v []float32, f string, w float32) {
	v[h.bucket(f, &w)] += w
}

// bucket returns the bucket of feature f and flips *w by its sign bit.
func (h *Hashing) bucket(f string, w *float32) int {
	const offset, prime = 14695981039346656037, 1099511628211
	x := uint64(offset)
	for i := 0; i < len(f); i++ {
		x ^= uint64(f[i])
		x *= prime
	}
	if x>>63 == 1 {
		*w = -*w
	}
	return int((x >> 1) % uint64(h.dim))
}

// tokenize returns the lower-cased, stemmed words of text. An apostrophe
// inside a word ends it and drops the rest ("what's" -> "what", "Paul's"
// -> "paul"), so contractions and possessives match their plain forms.
func tokenize(text string) []string {
	var words []string
	start, skip := -1, false
	flush := func(end int) {
		if start >= 0 {
			words = append(words, stem(strings.ToLower(text[start:end])))
		}
		start = -1
	}
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case (r == '\'' || r == '’') && start >= 0:
			flush(i)
			skip = true
		case inWord && start < 0 && !skip:
			start = i
		case !inWord:
			flush(i)
			skip = false
		}
	}
	flush(len(text))
	return words
}

// stem strips common English inflections from lower-case ASCII words
// ("works", "working", "worked" -> "work"; "stories" -> "story"; "boxes" ->
// "box"); other words, and short ones, are left alone.
func stem(w string) string {
	if len(w) < 4 || !isASCIILetters(w) {
		return w
	}
	n := len(w)
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "ing") && n >= 6:
		return undouble(w[:n-3])
	case strings.HasSuffix(w, "ed") && n >= 5:
		return undouble(w[:n-2])
	case strings.HasSuffix(w, "ly") && n >= 5:
		return w[:n-2]
	case strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "xes"):
		return w[:n-2]
	case strings.HasSuffix(w, "s"):
		return w[:n-1]
	}
	return w
}

// undouble drops a doubled final consonant left by a stripped suffix
// ("runn" -> "run"), keeping ll, ss and zz ("fall", "pass").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// ngrams returns the character 3-grams of "<w>" (whole runes).
func ngrams(w string) []string {
	marked := "<" + w + ">"
	if utf8.RuneCountInString(marked) <= 3 {
		return []string{marked}
	}
	var idx []int
	for i := range marked {
		idx = append(idx, i)
	}
	idx = append(idx, len(marked))
	grams := make([]string, 0, len(idx)-3)
	for i := 0; i+3 < len(idx); i++ {
		grams = append(grams, marked[idx[i]:idx[i+3]])
	}
	return grams
}

// pairWeight is the weight of a word pair relative to a word: pairs reward
// shared phrasing, but paraphrases reorder words, so they count for less.
const pairWeight = 0.35

// stopWords are damped, not dropped: "to be or not to be" still embeds.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how i if in into is it its itself just me
		more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
		should so some such than that the their theirs them themselves then there these they this those through to
		too under until up very was we were what when where which while who whom why will with would you your
		yours yourself yourselves`) {
		m[w] = true
	}
	return m
}()
