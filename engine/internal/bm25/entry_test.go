package bm25

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/analysis"
)

// docOf analyzes text as the engine does a record's content (without the
// engine's cap on distinct terms).
func docOf(text string) Doc {
	all := analysis.Terms(text)
	var d Doc
	for _, tc := range analysis.Count(all) {
		d.Terms = append(d.Terms, TermFreq{tc.Term, uint32(tc.Count)})
	}
	if len(all) > 0 {
		d.Length = uint32(len(all))
	}
	return d
}

// TestEntryBytes pins the stored format: these bytes are on disk.
func TestEntryBytes(t *testing.T) {
	cases := []struct {
		name string
		d    Doc
		want []byte
	}{
		{"empty", Doc{}, []byte{1, 0, 0}},
		{"two terms", Doc{Length: 3, Terms: []TermFreq{{"a", 2}, {"bc", 1}}}, []byte{1, 3, 2, 1, 'a', 2, 2, 'b', 'c', 1}},
		{"multi-byte varints", Doc{Length: 300, Terms: []TermFreq{{strings.Repeat("x", 128), 200}}},
			append(append([]byte{1, 0xac, 0x02, 1, 0x80, 0x01}, strings.Repeat("x", 128)...), 0xc8, 0x01)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Encode(c.d)
			if !bytes.Equal(b, c.want) {
				t.Fatalf("Encode = %x, want %x", b, c.want)
			}
			d, err := Decode(b)
			if err != nil || !d.Equal(c.d) {
				t.Fatalf("Decode = %+v, %v; want %+v", d, err, c.d)
			}
		})
	}
}

// TestEntryRoundTrip: what the analyzer makes of texts survives Encode and
// Decode, including a length above the sum of the frequencies (a record
// that kept only its most frequent terms) and the largest values.
func TestEntryRoundTrip(t *testing.T) {
	docs := map[string]Doc{
		"analyzed":  docOf("The quick brown fox jumps over the lazy dog; the dog sleeps."),
		"scripts":   docOf("Meeting in Tokyo (東京) with Дмитрий about naïve Bayes"),
		"truncated": {Length: 1000, Terms: []TermFreq{{"a", 7}, {"b", 1}}},
		"largest":   {Length: math.MaxUint32, Terms: []TermFreq{{"a", math.MaxUint32}}},
	}
	for name, d := range docs {
		t.Run(name, func(t *testing.T) {
			got, err := Decode(Encode(d))
			if err != nil || !got.Equal(d) {
				t.Fatalf("round trip of %+v: %+v, %v", d, got, err)
			}
		})
	}
}

// TestDecodeMalformed: each rule of the format is enforced, and every
// truncation of a valid entry is refused.
func TestDecodeMalformed(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	uv := func(v uint64) []byte { return binary.AppendUvarint(nil, v) }
	cases := []struct {
		name string
		b    []byte
	}{
		{"nil", nil},
		{"version 0", []byte{0, 0, 0}},
		{"version 2", []byte{2, 0, 0}},
		{"no count", []byte{1, 0}},
		{"truncated varint", []byte{1, 0x80}},
		{"length above 2^32-1", cat([]byte{1}, uv(math.MaxUint32+1), uv(0))},
		{"count above MaxTextTerms", cat([]byte{1}, uv(1<<20), uv(mnemo.MaxTextTerms+1))},
		{"count beyond the bytes", []byte{1, 5, 3, 1, 'a', 1}},
		{"empty term", []byte{1, 1, 1, 0, 1}},
		{"term beyond the bytes", []byte{1, 1, 1, 9, 'a', 1}},
		{"zero frequency", []byte{1, 1, 1, 1, 'a', 0}},
		{"frequency above 2^32-1", cat([]byte{1, 1, 1, 1, 'a'}, uv(math.MaxUint32+1))},
		{"unsorted terms", []byte{1, 2, 2, 1, 'b', 1, 1, 'a', 1}},
		{"repeated term", []byte{1, 2, 2, 1, 'a', 1, 1, 'a', 1}},
		{"frequencies above length", []byte{1, 2, 2, 1, 'a', 2, 1, 'b', 1}},
		{"trailing bytes", []byte{1, 1, 1, 1, 'a', 1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d, err := Decode(c.b); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode(%x) = %+v, %v; want ErrMalformed", c.b, d, err)
			}
		})
	}
	b := Encode(docOf("alpha beta beta gamma"))
	for n := range len(b) {
		if _, err := Decode(b[:n]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("Decode of the first %d of %d bytes: %v", n, len(b), err)
		}
	}
}

// FuzzEntry: Decode never panics, and what it accepts survives a round
// trip through Encode.
func FuzzEntry(f *testing.F) {
	f.Add(Encode(docOf("the quick brown fox jumps over the lazy dog")))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Decode(Encode(d))
		if err != nil || !again.Equal(d) {
			t.Fatalf("round trip of %x: %v", b, err)
		}
	})
}
