package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/memory/embed"
)

// embedderNames lists what --embedder accepts.
const embedderNames = "hashing, openai or ollama"

// embedderFlags are the flags that choose an embedder: --embedder, and for
// a model server --model and --embed-url; the dimension is --dim. An
// OpenAI API key comes from OPENAI_API_KEY, never from a flag (a flag
// shows in the process list).
type embedderFlags struct {
	name, model, url *string
}

// addEmbedderFlags registers the embedder flags on fs; use says what
// --embedder does in this command.
func addEmbedderFlags(fs *flagSet, use string) *embedderFlags {
	return &embedderFlags{
		name:  fs.String("embedder", "", use+": "+embedderNames+" (hashing is the offline one; openai is any OpenAI-compatible server, its key in OPENAI_API_KEY)"),
		model: fs.String("model", "", "the model `NAME` of --embedder openai or ollama, such as text-embedding-3-small or nomic-embed-text"),
		url:   fs.String("embed-url", "", "the base `URL` of the embedding server (default: OPENAI_BASE_URL or https://api.openai.com/v1 for openai, OLLAMA_HOST or http://localhost:11434 for ollama)"),
	}
}

// build returns the embedder the flags name, with dimension dim (0: the
// offline embedder's own; required for a model server), or nil when
// --embedder is not given.
func (f *embedderFlags) build(dim int) (embed.Embedder, error) {
	name := strings.ToLower(*f.name)
	if name == "" {
		if *f.model != "" || *f.url != "" {
			return nil, errors.New("--model and --embed-url need --embedder")
		}
		return nil, nil
	}
	if name == "hashing" {
		if *f.model != "" || *f.url != "" {
			return nil, errors.New("--model and --embed-url are for --embedder openai or ollama")
		}
		return embed.NewHashing(0)
	}
	if name != "openai" && name != "ollama" {
		return nil, fmt.Errorf("unknown embedder %q (want %s)", *f.name, embedderNames)
	}
	if *f.model == "" || dim <= 0 {
		return nil, fmt.Errorf("--embedder %s needs --model and --dim (the model's dimension)", name)
	}
	return httpEmbedder(name, *f.model, dim, *f.url)
}

// httpEmbedder returns the model server's embedder: name openai or
// ollama, at url (empty: the environment's or the default).
func httpEmbedder(name, model string, dim int, url string) (embed.Embedder, error) {
	o := embed.HTTPOptions{BaseURL: url, Model: model, Dimension: dim}
	if name == "ollama" {
		if o.BaseURL == "" {
			o.BaseURL = ollamaHost(os.Getenv("OLLAMA_HOST"))
		}
		return embed.NewOllama(o)
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	// A server other than OpenAI's may need no key (a local gateway).
	return embed.NewOpenAI(embed.OpenAIOptions{HTTPOptions: o, AllowNoKey: o.BaseURL != ""})
}

// ollamaHost turns OLLAMA_HOST (host:port, or a URL) into a base URL;
// empty stays empty (the default).
func ollamaHost(h string) string {
	if h == "" || strings.Contains(h, "://") {
		return h
	}
	return "http://" + h
}

// collectionEmbedder returns the embedder that made the vectors of a
// collection with config cfg, rebuilt from the identity the collection
// records: any version of the offline hashing embedder, or a model
// server's (openai/MODEL/DIM, ollama/MODEL/DIM) at the address the
// environment gives (OPENAI_BASE_URL and OPENAI_API_KEY, OLLAMA_HOST).
// It fails with an error wrapping errNoEmbedder (none recorded) or
// errForeignEmbedder (one the command line cannot rebuild, or a server it
// cannot reach without a key). Only the embedder the identity names is
// returned: vectors of any other live in another space.
func collectionEmbedder(cfg mnemo.CollectionConfig) (embed.Embedder, error) {
	if cfg.Embedder == "" {
		return nil, errNoEmbedder
	}
	if h, ok := embed.Offline(cfg.Embedder); ok && h.Dimension() == cfg.Dimension {
		return h, nil
	}
	if name, model, dim, ok := parseHTTPIdentity(cfg.Embedder); ok && dim == cfg.Dimension {
		e, err := httpEmbedder(name, model, dim, "")
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errForeignEmbedder, cfg.Embedder, err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("%w: %s", errForeignEmbedder, cfg.Embedder)
}

// parseHTTPIdentity splits a model server's identity, NAME/MODEL/DIM
// (the model may hold slashes).
func parseHTTPIdentity(id string) (name, model string, dim int, ok bool) {
	name, rest, ok := strings.Cut(id, "/")
	if !ok || name != "openai" && name != "ollama" {
		return "", "", 0, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return "", "", 0, false
	}
	dim, err := strconv.Atoi(rest[i+1:])
	if err != nil || dim <= 0 {
		return "", "", 0, false
	}
	return name, rest[:i], dim, true
}

// embedOne embeds text with e. A text that embeds to the zero vector (it
// has nothing the embedder counts, such as no letters or digits) is an
// error: it has no direction to search by.
func embedOne(ctx context.Context, e embed.Embedder, text string) ([]float32, error) {
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("the embedder returned %d vectors for one text", len(vs))
	}
	if embed.IsZero(vs[0]) {
		return nil, errZeroEmbedding
	}
	return vs[0], nil
}

// embedTexts embeds texts with e: in one call, or when that fails one by
// one, so that each error is its own text's. errs[i] is the error of
// texts[i], errZeroEmbedding for a text that embeds to the zero vector.
func embedTexts(ctx context.Context, e embed.Embedder, texts []string) (vecs [][]float32, errs []error) {
	errs = make([]error, len(texts))
	vecs, err := e.Embed(ctx, texts)
	if err != nil || len(vecs) != len(texts) {
		vecs = make([][]float32, len(texts))
		for i, t := range texts {
			vecs[i], errs[i] = embedOne(ctx, e, t)
		}
		return vecs, errs
	}
	for i, v := range vecs {
		if embed.IsZero(v) {
			errs[i] = errZeroEmbedding
		}
	}
	return vecs, errs
}

// describeEmbedder names the embedder a collection records, for messages.
func describeEmbedder(identity string) string {
	if identity == "" {
		return "no recorded embedder"
	}
	return "the embedder " + identity
}
