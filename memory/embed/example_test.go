package embed_test

import (
	"context"
	"fmt"

	"github.com/mnemodb/mnemo/memory/embed"
)

// Example embeds with the offline hashing embedder, which needs no
// network: it matches words and their parts, not meaning.
func Example() {
	e, err := embed.NewHashing(0) // 0: its default dimension
	if err != nil {
		panic(err)
	}
	vs, err := e.Embed(context.Background(), []string{"Paul works at Google", "Where does Paul work?", "Sarah plays the cello"})
	if err != nil {
		panic(err)
	}
	cos := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i] // the vectors are unit length
		}
		return s
	}
	fmt.Println(e.Identity())
	fmt.Println(cos(vs[0], vs[1]) > cos(vs[0], vs[2]))
	// Output:
	// hashing/v2/1024
	// true
}

// ExampleNewOpenAI makes an embedder for any OpenAI-compatible server;
// it reads the key from OPENAI_API_KEY when Options.APIKey is empty, and
// a server that needs no key (a local gateway) may set AllowNoKey. Its
// identity, stored with every collection it embeds, names the model and
// the dimension.
func ExampleNewOpenAI() {
	e, err := embed.NewOpenAI(embed.OpenAIOptions{
		HTTPOptions: embed.HTTPOptions{BaseURL: "http://localhost:8080/v1", Model: "text-embedding-3-small", Dimension: 1536},
		AllowNoKey:  true,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Identity())
	// Output: openai/text-embedding-3-small/1536
}

// ExampleNewOllama makes an embedder for a local Ollama server.
func ExampleNewOllama() {
	e, err := embed.NewOllama(embed.HTTPOptions{Model: "nomic-embed-text", Dimension: 768})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Identity())
	// Output: ollama/nomic-embed-text/768
}
