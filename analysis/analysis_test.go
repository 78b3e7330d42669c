package analysis

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTerms(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"?", nil},
		{"🙂 !!", nil},
		{"Running runs RUN", []string{"run", "run", "run"}},
		{"Caroline: I went to the LGBTQ support group!", []string{"carolin", "went", "lgbtq", "support", "group"}},
		{"don't O'Brien's 'quoted'", []string{"don't", "o'brien", "quot"}},
		{"it’s The Who", []string{"it"}},
		{"7 May 2023, 3pm", []string{"7", "may", "2023", "3pm"}},
		{"東京都に行く", []string{"東京", "京都", "都に", "に行", "行く"}},
		{"猫", []string{"猫"}},
		{"iPhone手机", []string{"iphon", "手机"}},
		{"Привет, мир", []string{"привет", "мир"}},
		{"naïve café", []string{"naïv", "café"}},
		{"x\xffy", []string{"x", "y"}},
		{"x" + strings.Repeat("y", MaxTermBytes) + " z", []string{"z"}},
		{"snake_case-word", []string{"snake", "case", "word"}},
	}
	for _, c := range cases {
		if got := Terms(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Terms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"", "Hello, world", "東京都", "a\xff'b", "don't", "é\u0301", "ก์ข"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := Terms(s)
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) || len(term) > 4*MaxTermBytes {
				t.Fatalf("Terms(%q) has term %q", s, term)
			}
		}
		if again := Terms(s); !slices.Equal(terms, again) {
			t.Fatalf("Terms(%q) not deterministic", s)
		}
	})
}

func BenchmarkTerms(b *testing.B) {
	text := "Caroline: I went to a LGBTQ support group yesterday and it was so powerful, the stories were inspiring."
	b.SetBytes(int64(len(text)))
	var dst []string
	for b.Loop() {
		dst = AppendTerms(dst[:0], text)
	}
}

func TestCount(t *testing.T) {
	in := []string{"b", "a", "b", "c", "b"}
	got := Count(in)
	want := []TermCount{{"a", 1}, {"b", 3}, {"c", 1}}
	if !slices.Equal(got, want) || !slices.Equal(in, []string{"b", "a", "b", "c", "b"}) {
		t.Fatalf("Count = %v (input now %v)", got, in)
	}
	if Count(nil) != nil {
		t.Fatal("Count(nil) is not empty")
	}
}
