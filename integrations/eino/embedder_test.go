package mnemo

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/cloudwego/eino/components/embedding"

	"github.com/mnemodb/mnemo/memory/embed"
)

func TestEmbedderToEino(t *testing.T) {
	h, _ := embed.NewHashing(64)
	e, err := NewEmbedder(h)
	if err != nil {
		t.Fatal(err)
	}
	var eino embedding.Embedder = e
	texts := []string{"Paul works at Google", "Anna bakes bread"}
	want, _ := h.Embed(ctx, texts)
	got, err := eino.EmbedStrings(ctx, texts)
	if err != nil || len(got) != 2 {
		t.Fatalf("EmbedStrings = %d vectors, %v", len(got), err)
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != float64(want[i][j]) {
				t.Fatalf("vector %d value %d: %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	if _, err := eino.EmbedStrings(ctx, texts, embedding.WithModel("text-embedding-3-small")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a model option: %v, want ErrInvalid", err)
	}
	if e.Identity() != h.Identity() || e.Dimension() != 64 {
		t.Fatalf("identity %q, dimension %d", e.Identity(), e.Dimension())
	}
}

// fixed is an Eino embedder that returns what it is told.
type fixed struct {
	vectors [][]float64
	err     error
}

func (f fixed) EmbedStrings(context.Context, []string, ...embedding.Option) ([][]float64, error) {
	return f.vectors, f.err
}

func TestForeignEmbedder(t *testing.T) {
	f, err := NewForeignEmbedder(fixed{vectors: [][]float64{{1, 0.5, 0}, {0, 1, 0}}}, 3, "test/model/3")
	if err != nil {
		t.Fatal(err)
	}
	var m embed.Embedder = f
	vs, err := m.Embed(ctx, []string{"a", "b"})
	if err != nil || len(vs) != 2 || vs[0][1] != 0.5 || vs[1][1] != 1 {
		t.Fatalf("Embed = %v, %v", vs, err)
	}
	tests := []struct {
		name    string
		vectors [][]float64
		texts   int
	}{
		{"too many vectors", [][]float64{{1, 0, 0}, {0, 1, 0}}, 1},
		{"short vector", [][]float64{{1, 0}}, 1},
		{"NaN", [][]float64{{math.NaN(), 0, 1}}, 1},
		{"beyond float32", [][]float64{{1e300, 0, 1}}, 1},
	}
	for _, tt := range tests {
		f, _ := NewForeignEmbedder(fixed{vectors: tt.vectors}, 3, "test/model/3")
		if _, err := f.Embed(ctx, make([]string, tt.texts)); !errors.Is(err, ErrEmbedding) {
			t.Errorf("%s: %v, want ErrEmbedding", tt.name, err)
		}
	}
	boom := errors.New("boom")
	ff, _ := NewForeignEmbedder(fixed{err: boom}, 3, "test/model/3")
	if _, err := ff.Embed(ctx, []string{"a"}); !errors.Is(err, boom) {
		t.Fatalf("failing embedder: %v", err)
	}
	for _, tt := range []struct {
		e   embedding.Embedder
		dim int
		id  string
	}{{nil, 3, "x"}, {fixed{}, 0, "x"}, {fixed{}, 3, ""}} {
		if _, err := NewForeignEmbedder(tt.e, tt.dim, tt.id); !errors.Is(err, ErrInvalid) {
			t.Fatalf("NewForeignEmbedder(%v, %d, %q): %v, want ErrInvalid", tt.e, tt.dim, tt.id, err)
		}
	}
}
