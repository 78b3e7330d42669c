package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
)

// OpenAI embeds with an OpenAI-compatible endpoint: POST {BaseURL}/embeddings
// with {"model", "input": [texts]}. It is safe for concurrent use.
type OpenAI struct {
	e httpEmbedder
}

// OpenAIOptions configure an OpenAI embedder.
type OpenAIOptions struct {
	HTTPOptions
	// APIKey is sent as a bearer token. Empty means the OPENAI_API_KEY
	// environment variable; a server that needs no key (a local gateway)
	// may leave both empty when AllowNoKey is set.
	APIKey     string
	AllowNoKey bool
}

// DefaultOpenAIBaseURL is used when BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// The keys of an OpenAI response that the embedder reads.
var (
	openAIKeys     = []string{"data"}
	openAIItemKeys = []string{"index", "embedding"}
)

// NewOpenAI returns an OpenAI-compatible embedder.
func NewOpenAI(opts OpenAIOptions) (*OpenAI, error) {
	o, err := opts.HTTPOptions.withDefaults(DefaultOpenAIBaseURL)
	if err != nil {
		return nil, err
	}
	key := opts.APIKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	if key == "" && !opts.AllowNoKey {
		return nil, fmt.Errorf("%w: no API key (set APIKey or OPENAI_API_KEY)", ErrConfig)
	}
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return &OpenAI{httpEmbedder{
		opts: o, path: "/embeddings", name: "openai", header: h,
		body: func(model string, batch []string) any {
			return map[string]any{"model": model, "input": batch}
		},
		decode: func(s *jsonStream, v *vectors) error {
			// {"data": [{"index": i, "embedding": [...]}, ...]}
			return s.object(openAIKeys, func(key string) error {
				if key != "data" {
					return s.skip()
				}
				v.reset()
				return s.value(func() error {
					return s.array(func() error {
						index, n := 0, 0
						var vec []float32
						err := s.value(func() error {
							return s.object(openAIItemKeys, func(key string) error {
								var err error
								switch key {
								case "index":
									err = s.value(func() error { index, err = s.integer(); return err })
								case "embedding":
									vec, n, err = s.floats(v.room())
								default:
									err = s.skip()
								}
								return err
							})
						})
						v.add(index, vec, n)
						return err
					})
				})
			})
		},
		errorMsg: func(data []byte) string {
			var r struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			json.Unmarshal(data, &r)
			return r.Error.Message
		},
	}}, nil
}

// Embed embeds texts in batches of BatchSize.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return o.e.embed(ctx, texts)
}

// Dimension returns the configured dimension.
func (o *OpenAI) Dimension() int { return o.e.opts.Dimension }

// Identity returns "openai/<model>/<dimension>".
func (o *OpenAI) Identity() string { return o.e.identity() }
