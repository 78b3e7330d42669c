package textvec

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
	"github.com/mnemodb/mnemo/memory/embed"
)

var (
	errEmpty   = errors.New("test: empty")
	errInvalid = errors.New("test: invalid")
	ctx        = context.Background()
)

func TestVector(t *testing.T) {
	s, err := New(nil, errEmpty, errInvalid, Observe{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Embedder().Identity(); got != "hashing/v2/1024" {
		t.Fatalf("default embedder %q", got)
	}
	tests := []struct {
		name, text string
		want       error
	}{
		{"text", "Paul works at Google", nil},
		{"empty", "", errEmpty},
		{"whitespace", " \t\n", errEmpty},
		{"symbols only", "?!...", nil},
		{"emoji only", "🙂", nil},
		{"invalid UTF-8", "bad \xff", errInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := s.Vector(ctx, "fact", tt.text)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Vector(%q) = %v, want %v", tt.text, err, tt.want)
			}
			if err == nil && (len(v) != embed.DefaultDimension || embed.IsZero(v)) {
				t.Fatalf("Vector(%q) has length %d", tt.text, len(v))
			}
		})
	}
}

func TestCollection(t *testing.T) {
	db, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, _ := New(nil, errEmpty, errInvalid, Observe{})
	c, err := s.Collection(ctx, db.Store(), "facts", "test")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Collection(ctx, db.Store(), "facts", "test"); err != nil || again != c {
		t.Fatalf("reopen = %v, %v", again, err)
	}
	small, _ := embed.NewHashing(64)
	other, _ := New(small, errEmpty, errInvalid, Observe{})
	if _, err := other.Collection(ctx, db.Store(), "facts", "test"); !errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("another embedder = %v, want embed.ErrMismatch", err)
	}
	if _, err := db.CreateCollection(ctx, "l2", mnemo.CollectionConfig{Dimension: 384, Metric: mnemo.L2, Embedder: "hashing/v1/384"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Collection(ctx, db.Store(), "l2", "test"); !errors.Is(err, mnemo.ErrCollectionExists) || errors.Is(err, embed.ErrMismatch) {
		t.Fatalf("another metric = %v, want mnemo.ErrCollectionExists", err)
	}
	if _, err := s.Collection(ctx, nil, "x", "test"); !errors.Is(err, errInvalid) {
		t.Fatalf("nil database = %v", err)
	}
}

func TestCheckCutoff(t *testing.T) {
	f := func(x float32) *float32 { return &x }
	inf := math.Inf(1)
	tests := []struct {
		name   string
		c      *float32
		lo, hi float64
		ok     bool
	}{
		{"unset", nil, 0, 2, true},
		{"inside", f(1.5), 0, 2, true},
		{"at the bounds", f(2), 0, 2, true},
		{"below", f(-0.1), 0, 2, false},
		{"above", f(2.1), 0, 2, false},
		{"NaN", f(float32(math.NaN())), -inf, inf, false},
		{"infinite", f(float32(math.Inf(-1))), -inf, inf, false},
		{"any finite", f(-7), -inf, inf, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCutoff(errInvalid, "cutoff", tt.c, tt.lo, tt.hi)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, errInvalid)) {
				t.Fatalf("CheckCutoff = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// zeroes is a model embedder that answers every text with the zero vector.
type zeroes struct{}

func (zeroes) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, 4)
	}
	return out, nil
}
func (zeroes) Dimension() int   { return 4 }
func (zeroes) Identity() string { return "test/zeroes/4" }

// TestZeroVectorFromModel: a model embedder that returns a zero vector
// for a text with words is a bad response, not empty text (only the
// offline embedder's zero vector means the text has nothing to embed).
func TestZeroVectorFromModel(t *testing.T) {
	s, _ := New(zeroes{}, errEmpty, errInvalid, Observe{})
	if _, err := s.Vector(ctx, "fact", "Paul works at Google"); !errors.Is(err, embed.ErrResponse) || errors.Is(err, errEmpty) {
		t.Fatalf("zero vector from a model: %v, want embed.ErrResponse", err)
	}
}
