package embed

import (
	"context"
	"encoding/json"
)

// Ollama embeds with a local Ollama server: POST {BaseURL}/api/embed with
// {"model", "input": [texts]}. It is safe for concurrent use.
type Ollama struct {
	e httpEmbedder
}

// DefaultOllamaBaseURL is used when BaseURL is empty.
const DefaultOllamaBaseURL = "http://localhost:11434"

// ollamaKeys are the keys of an Ollama response that the embedder reads.
var ollamaKeys = []string{"embeddings"}

// NewOllama returns an Ollama embedder.
func NewOllama(opts HTTPOptions) (*Ollama, error) {
	o, err := opts.withDefaults(DefaultOllamaBaseURL)
	if err != nil {
		return nil, err
	}
	return &Ollama{httpEmbedder{
		opts: o, path: "/api/embed", name: "ollama",
		body: func(model string, batch []string) any {
			return map[string]any{"model": model, "input": batch}
		},
		decode: func(s *jsonStream, v *vectors) error {
			// {"embeddings": [[...], ...]}
			return s.object(ollamaKeys, func(key string) error {
				if key != "embeddings" {
					return s.skip()
				}
				v.reset()
				return s.value(func() error {
					return s.array(func() error {
						vec, n, err := s.floats(v.room())
						v.add(v.n, vec, n)
						return err
					})
				})
			})
		},
		errorMsg: func(data []byte) string {
			var r struct {
				Error string `json:"error"`
			}
			json.Unmarshal(data, &r)
			return r.Error
		},
	}}, nil
}

// Embed embeds texts in batches of BatchSize.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.e.embed(ctx, texts)
}

// Dimension returns the configured dimension.
func (o *Ollama) Dimension() int { return o.e.opts.Dimension }

// Identity returns "ollama/<model>/<dimension>".
func (o *Ollama) Identity() string { return o.e.identity() }
