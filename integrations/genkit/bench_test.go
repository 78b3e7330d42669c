package mnemo

import (
	"fmt"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/engine"
)

// BenchmarkRetrieve compares, on 2,000 documents with k=4 and a metadata
// filter: genkit.Retrieve (Genkit's action: input validated against the
// schema, traced), the DocStore's retriever function called directly, and
// what that function does on the engine (embed the query, Query).
func BenchmarkRetrieve(b *testing.B) {
	db, err := engine.OpenStore("", &engine.Options{InMemory: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	g := genkit.Init(ctx)
	ds, r, err := DefineRetriever(ctx, g, db, "bench", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	people := []string{"Paul", "Anna", "Omar", "Lena", "Ken", "Sara", "Ivan", "Mia"}
	places := []string{"Google", "a bakery", "a school", "the harbour", "a hospital", "the museum"}
	cities := []string{"Lyon", "Paris", "Oslo", "Kyoto", "Lima", "Cairo", "Perth"}
	docs := make([]*ai.Document, 2000)
	for i := range docs {
		docs[i] = ai.DocumentFromText(fmt.Sprintf("%s works at %s in %s since %d", people[i%len(people)], places[i%len(places)], cities[i%len(cities)], 1990+i%37),
			map[string]any{"n": i, "city": cities[i%len(cities)]})
	}
	if err := Index(ctx, docs, ds); err != nil {
		b.Fatal(err)
	}
	queries := []string{"who works at Google in Lyon?", "a bakery in Oslo", "Anna at the museum", "hospital in Perth since 2001"}
	opts := &RetrieverOptions{K: 4, Filter: map[string]any{"city": "Paris"}}
	b.Run("genkit.Retrieve", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := genkit.Retrieve(ctx, g, ai.WithRetriever(r), ai.WithTextDocs(queries[i%len(queries)]), ai.WithConfig(opts)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DocStore.Retrieve", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := ds.Retrieve(ctx, &ai.RetrieverRequest{Query: ai.DocumentFromText(queries[i%len(queries)], nil), Options: opts}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		f, _ := mnemo.NewFilter(map[string]any{"city": "Paris"})
		c, _ := ds.Collection(ctx)
		for i := 0; b.Loop(); i++ {
			vs, err := ds.docs.Embedder().Embed(ctx, []string{queries[i%len(queries)]})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Query(ctx, mnemo.Query{Vector: vs[0], K: 4, Filter: f}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
