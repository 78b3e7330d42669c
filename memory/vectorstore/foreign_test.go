package vectorstore

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
	"github.com/mnemodb/mnemo/memory/vectorstore/vectorstoretest"
)

// fixed returns an EmbedFunc that returns vs and err, whatever the texts.
func fixed(vs [][]float32, err error) EmbedFunc {
	return func(context.Context, []string) ([][]float32, error) { return vs, err }
}

func TestForeign(t *testing.T) {
	f, err := NewForeign(fixed([][]float32{{1, 0.5, 0}, {0, 1, 0}}, nil), nil, 3, "test/model/3")
	if err != nil {
		t.Fatal(err)
	}
	var e embed.Embedder = f
	vs, err := e.Embed(ctx, []string{"a", "b"})
	if err != nil || len(vs) != 2 || !slices.Equal(vs[0], []float32{1, 0.5, 0}) {
		t.Fatalf("Embed = %v, %v", vs, err)
	}
	if e.Dimension() != 3 || e.Identity() != "test/model/3" {
		t.Fatalf("dimension %d, identity %q", e.Dimension(), e.Identity())
	}
	boom := errors.New("boom")
	tests := []struct {
		name  string
		vs    [][]float32
		err   error
		texts int
		want  error
	}{
		{"too many vectors", [][]float32{{1, 0, 0}, {0, 1, 0}}, nil, 1, ErrEmbedding},
		{"too few vectors", nil, nil, 1, ErrEmbedding},
		{"short vector", [][]float32{{1, 0}}, nil, 1, mnemo.ErrDimension},
		{"NaN", [][]float32{{float32(math.NaN()), 0, 1}}, nil, 1, mnemo.ErrNonFinite},
		{"infinity", [][]float32{{float32(math.Inf(1)), 0, 1}}, nil, 1, ErrEmbedding},
		{"a zero vector is the caller's to judge", [][]float32{{0, 0, 0}}, nil, 1, nil},
		{"failing embedder", nil, boom, 1, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := NewForeign(fixed(tt.vs, tt.err), nil, 3, "test/model/3")
			_, err := f.Embed(ctx, make([]string, tt.texts))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Embed: %v, want %v", err, tt.want)
			}
			_, err = f.EmbedQuery(ctx, "a")
			if tt.name != "too many vectors" && (!errors.Is(err, tt.want) || (tt.want == nil) != (err == nil)) {
				t.Fatalf("EmbedQuery: %v, want %v", err, tt.want)
			}
		})
	}
	bad := []struct {
		name string
		fn   EmbedFunc
		dim  int
		id   string
	}{{"nil function", nil, 3, "x"}, {"dimension 0", fixed(nil, nil), 0, "x"}, {"no identity", fixed(nil, nil), 3, " "}}
	for _, tt := range bad {
		if _, err := NewForeign(tt.fn, nil, tt.dim, tt.id); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tt.name, err)
		}
	}
}

func TestForeignQuery(t *testing.T) {
	var queries []string
	query := func(_ context.Context, text string) ([]float32, error) {
		queries = append(queries, text)
		if text == "short" {
			return []float32{1}, nil
		}
		return []float32{0, 0, 1}, nil
	}
	f, _ := NewForeign(fixed([][]float32{{1, 0, 0}}, nil), query, 3, "test/model/3")
	if v, err := f.EmbedQuery(ctx, "q"); err != nil || !slices.Equal(v, []float32{0, 0, 1}) {
		t.Fatalf("EmbedQuery = %v, %v", v, err)
	}
	if _, err := f.EmbedQuery(ctx, "short"); !errors.Is(err, ErrEmbedding) {
		t.Fatalf("a short query vector: %v, want ErrEmbedding", err)
	}
	if !slices.Equal(queries, []string{"q", "short"}) {
		t.Fatalf("queries %q", queries)
	}
}

// TestForeignStore: a Foreign as a Store's embedder; its identity goes
// with the collection.
func TestForeignStore(t *testing.T) {
	vectorstoretest.Run(t, func(t *testing.T, db mnemo.Store) {
		h, _ := embed.NewHashing(0)
		f, err := NewForeign(h.Embed, nil, h.Dimension(), "theirs/hashing")
		if err != nil {
			t.Fatal(err)
		}
		s := newStore(t, db, &Options{Embedder: f})
		add(t, s, corpus)
		if got := search(t, s, Search{Text: "Paul likes hiking", K: 1}); !slices.Equal(got, []string{"paul-hike"}) {
			t.Fatalf("got %q", got)
		}
		if c, _ := s.Collection(ctx); c.Config().Embedder != "theirs/hashing" {
			t.Fatalf("collection embedder %q", c.Config().Embedder)
		}
	})
}

func TestDefaultEmbedder(t *testing.T) {
	h, _ := embed.NewHashing(64)
	if e, err := DefaultEmbedder(h); e != h || err != nil {
		t.Fatalf("DefaultEmbedder(h) = %v, %v", e, err)
	}
	h0, _ := embed.NewHashing(0)
	if e, err := DefaultEmbedder(nil); err != nil || e.Identity() != h0.Identity() {
		t.Fatalf("DefaultEmbedder(nil) = %v, %v", e, err)
	}
}

func TestAsEmbedder(t *testing.T) {
	h, _ := embed.NewHashing(64)
	var none embed.Embedder
	tests := []struct {
		name string
		e    any
		want embed.Embedder
		err  error
	}{
		{"nil", nil, nil, nil},
		{"a nil interface", none, nil, nil},
		{"a mnemo embedder", h, h, nil},
		{"a framework's embedder", struct{}{}, nil, ErrNoIdentity},
	}
	for _, tt := range tests {
		got, err := AsEmbedder(tt.e)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("%s: %v, %v", tt.name, got, err)
		}
	}
}
