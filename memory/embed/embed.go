// Package embed turns text into vectors for mnemo's memory adapters.
//
// An Embedder embeds a batch of texts, reports its dimension, and names
// itself with a stable identity (name, model and dimension) that the
// adapters store with their collections, so that reopening a memory with a
// different embedder is a clear error instead of silently comparing
// vectors from two different spaces.
//
// Three implementations:
//
//   - [Hashing], the offline default: deterministic, dependency-free
//     feature hashing of the engine's analyzed terms, term pairs and
//     character n-grams, good enough for lexical recall ("work" matches
//     "works at Google") and fast (tens of thousands of short sentences
//     per second on one core); it states its own similarity scale
//     ([Calibrated]) so that adapters' default thresholds fit it;
//   - [OpenAI], any OpenAI-compatible POST {base}/embeddings endpoint;
//   - [Ollama], a local Ollama server's POST /api/embed.
//
// The HTTP embedders batch their input, take their deadline from the
// context, retry 429 and 5xx answers with exponential backoff (honouring
// Retry-After), report a 4xx with the server's own message, and check that
// the server returned one vector per text, each of the expected dimension.
// A response cut short is retried like a network error and reported as
// truncated; one over MaxResponseBytes is an error naming the limit.
package embed

import "context"

// Embedder turns texts into vectors. Implementations are safe for
// concurrent use by multiple goroutines.
type Embedder interface {
	// Embed returns one vector per text, in order, each of length
	// Dimension. The caller owns the returned slices.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimension is the length of every vector.
	Dimension() int
	// Identity names the embedder, model and dimension, e.g.
	// "hashing/v1/384" or "openai/text-embedding-3-small/1536". Vectors of
	// two embedders are comparable only when their identities are equal.
	Identity() string
}

// IsZero reports whether v is the zero vector, which is what Hashing
// returns for empty or whitespace-only text (version 1: for text without
// letters or digits): such a vector has no direction and cannot be
// searched by cosine.
func IsZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Calibrated is implemented by embedders that know their own similarity
// scale: RelatedSimilarity is the cosine similarity from which a stored
// text is related enough to a query to be worth returning. Similarity
// thresholds mean different things for different embedders (a neural
// model rates unrelated sentences 0.2 to 0.5, a hashing embedder rates
// paraphrases 0.3), so memory adapters whose contract has a default
// threshold use this value instead when the embedder offers one.
type Calibrated interface {
	RelatedSimilarity() float32
}
