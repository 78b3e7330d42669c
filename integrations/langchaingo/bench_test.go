package mnemo

import (
	"fmt"
	"testing"

	"github.com/mnemodb/mnemo"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/vectorstores"
)

// benchDocs returns n short synthetic documents.
func benchDocs(n int) []schema.Document {
	people := []string{"Paul", "Anna", "Omar", "Lena", "Ken", "Sara", "Ivan", "Mia"}
	places := []string{"Google", "a bakery", "a school", "the harbour", "a hospital", "the museum"}
	cities := []string{"Lyon", "Paris", "Oslo", "Kyoto", "Lima", "Cairo", "Perth"}
	docs := make([]schema.Document, n)
	for i := range docs {
		docs[i] = schema.Document{
			PageContent: fmt.Sprintf("%s works at %s in %s since %d", people[i%len(people)], places[i%len(places)], cities[i%len(cities)], 1990+i%37),
			Metadata:    map[string]any{"n": i, "city": cities[i%len(cities)]},
		}
	}
	return docs
}

// BenchmarkSearch compares a SimilaritySearch with what it does on the
// engine directly (embed the query, Query k=4), on 2,000 documents:
// the difference is the adapter's cost.
func BenchmarkSearch(b *testing.B) {
	s, err := OpenStore("", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	docs := benchDocs(2000)
	for i := 0; i < len(docs); i += 500 {
		if _, err := s.AddDocuments(ctx, docs[i:i+500]); err != nil {
			b.Fatal(err)
		}
	}
	queries := []string{"who works at Google in Lyon?", "a bakery in Oslo", "Anna at the museum", "hospital in Perth since 2001"}
	filter := map[string]any{"city": "Paris"}
	b.Run("langchaingo", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.SimilaritySearch(ctx, queries[i%len(queries)], 4, vectorstores.WithFilters(filter)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		c, _ := s.DB().Collection(ctx, DefaultCollection)
		f, _ := mnemo.NewFilter(filter)
		for i := 0; b.Loop(); i++ {
			vs, err := s.docs.Embedder().Embed(ctx, []string{queries[i%len(queries)]})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Query(ctx, mnemo.Query{Vector: vs[0], K: 4, Filter: f}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
