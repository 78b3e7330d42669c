package retrieval

import (
	"strings"
	"testing"
)

// TestEmbedderEnv: MNEMO_BENCH_EMBEDDER names the offline embedder by
// default, an OpenAI-compatible or Ollama model with its dimension, and
// anything else is refused with what it wants.
func TestEmbedderEnv(t *testing.T) {
	for spec, want := range map[string]string{
		"":                                "",
		"hashing":                         "",
		"openai:text-embedding-3-small:8": "openai/text-embedding-3-small/8",
		"ollama:nomic-embed-text:768":     "ollama/nomic-embed-text/768",
		"openai:m":                        "want hashing",
		"ollama:m:0":                      "not a positive integer",
		"cohere:m:8":                      "want hashing",
	} {
		t.Setenv(EmbedderEnv, spec)
		t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
		e, err := Embedder()
		switch {
		case strings.HasPrefix(want, "want") || strings.HasPrefix(want, "not"):
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %v, want an error saying %q", spec, err, want)
			}
		case want == "":
			if err != nil || e != nil {
				t.Errorf("%q: %v %v, want the default", spec, e, err)
			}
		default:
			if err != nil || e == nil || !strings.Contains(e.Identity(), strings.Split(want, "/")[1]) || e.Dimension() == 0 {
				t.Errorf("%q: %v (%v), want %s", spec, e, err, want)
			}
		}
	}
}
