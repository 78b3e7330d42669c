package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemodb/mnemo/engine/analysis"
	"github.com/mnemodb/mnemo/index"
)

// Metric is the distance a collection ranks by.
type Metric = index.Metric

// Metrics. See the package doc for the distances and similarities.
const (
	Cosine = index.Cosine
	Dot    = index.Dot
	L2     = index.L2
)

// IndexKind selects a collection's index.
type IndexKind string

// Index kinds.
const (
	// HNSW is the approximate graph index (the default).
	HNSW IndexKind = "hnsw"
	// Flat is an exact scan: for small collections, or exact answers.
	Flat IndexKind = "flat"
)

// CollectionConfig defines a collection. It is persisted on create; a
// reopened database needs none of it again.
type CollectionConfig struct {
	// Dimension of every vector. Required.
	Dimension int `json:"dimension"`
	// Metric; zero means Cosine.
	Metric Metric `json:"metric"`
	// Index kind; empty means HNSW.
	Index IndexKind `json:"index"`
	// HNSW parameters; zero means the index defaults (M 16,
	// efConstruction 200, efSearch 64).
	M              int `json:"m,omitempty"`
	EfConstruction int `json:"ef_construction,omitempty"`
	EfSearch       int `json:"ef_search,omitempty"`
	// Quantize is the HNSW index's quantization: "" or "none" (the
	// default), or "sq8": the graph is walked on 8-bit codes (a quarter of
	// the bytes of the float32 vectors, which are kept for re-ranking the
	// candidates and for exact plans). See index.SQ8.
	Quantize string `json:"quantize,omitempty"`
	// Embedder optionally names what made the vectors (an embedder's
	// identity, such as "hashing/v1/384"). It is persisted and compared
	// like the rest of the config, so reopening a collection with another
	// embedder fails with ErrCollectionExists instead of mixing vector
	// spaces.
	Embedder string `json:"embedder,omitempty"`
	// Kind optionally names what owns the collection, such as a memory
	// adapter ("toolmem.tools", "chat.vector"). It is persisted and
	// compared like the rest of the config; the adapters refuse to open
	// another kind's collection (backend.ErrCollectionKind), so two
	// memories that pick the same name cannot share one collection.
	Kind string `json:"kind,omitempty"`
	// Text configures the full-text index (see TextConfig). The zero value
	// indexes each record's content with BM25's default parameters.
	Text TextConfig `json:"text"`
}

// TextConfig configures a collection's full-text index, which Query uses
// for text and hybrid queries. Every record's content (and the listed
// metadata fields) is analyzed by package analysis and indexed in the same
// atomic write as the record.
type TextConfig struct {
	// Disabled turns the full-text index off: writes are cheaper and
	// queries must carry a vector.
	Disabled bool `json:"disabled,omitempty"`
	// Fields names metadata fields whose string values (or lists of
	// strings) are indexed with the content, such as a speaker's name or
	// a date. At most 64.
	Fields []string `json:"fields,omitempty"`
	// BM25 sets the scoring parameters; nil means k1 1.2, b 0.75. A query
	// can override them (Query.BM25).
	BM25 *BM25 `json:"bm25,omitempty"`
	// Analyzer records the analysis rules the index was built with
	// (analysis.Version); set on create.
	Analyzer string `json:"analyzer,omitempty"`
}

// equal reports whether two configs (defaults applied) are the same.
func (c CollectionConfig) equal(o CollectionConfig) bool {
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(o)
	return bytes.Equal(a, b)
}

func (c CollectionConfig) withDefaults() CollectionConfig {
	if c.Metric == 0 {
		c.Metric = Cosine
	}
	if c.Index == "" {
		c.Index = HNSW
	}
	if !c.Text.Disabled {
		if c.Text.BM25 == nil {
			c.Text.BM25 = &BM25{K1: DefaultBM25K1, B: DefaultBM25B}
		}
		if c.Text.Analyzer == "" {
			c.Text.Analyzer = analysis.Version
		}
		c.Text.Fields = slices.Clone(c.Text.Fields)
	}
	if c.Index == HNSW {
		if c.M == 0 {
			c.M = index.DefaultM
		}
		if c.EfConstruction == 0 {
			c.EfConstruction = index.DefaultEfConstruction
		}
		if c.EfSearch == 0 {
			c.EfSearch = index.DefaultEfSearch
		}
		if q, err := index.ParseQuantization(c.Quantize); err == nil {
			c.Quantize = "" // none, as a config that never named one
			if q != index.NoQuantization {
				c.Quantize = q.String()
			}
		}
	}
	return c
}

// quantization names the index quantization of a config with defaults
// applied, as index.Quantization's String does.
func (c CollectionConfig) quantization() string {
	if c.Quantize == "" {
		return index.NoQuantization.String()
	}
	return c.Quantize
}

// Validate reports every problem with the config at once.
func (c CollectionConfig) Validate() error {
	var errs []error
	if c.Dimension <= 0 || c.Dimension > 1<<16 {
		errs = append(errs, fmt.Errorf("%w: dimension %d, want 1..65536", ErrInvalidConfig, c.Dimension))
	}
	if c.Metric != 0 && c.Metric != Cosine && c.Metric != Dot && c.Metric != L2 {
		errs = append(errs, fmt.Errorf("%w: unknown metric %d", ErrInvalidConfig, c.Metric))
	}
	if c.Index != "" && c.Index != HNSW && c.Index != Flat {
		errs = append(errs, fmt.Errorf("%w: unknown index kind %q (want hnsw or flat)", ErrInvalidConfig, c.Index))
	}
	if len(c.Kind) > 64 || !utf8.ValidString(c.Kind) {
		errs = append(errs, fmt.Errorf("%w: kind %q: want at most 64 bytes of UTF-8", ErrInvalidConfig, c.Kind))
	}
	if len(c.Text.Fields) > 64 {
		errs = append(errs, fmt.Errorf("%w: %d text fields, at most 64", ErrInvalidConfig, len(c.Text.Fields)))
	}
	for i, f := range c.Text.Fields {
		if f == "" || slices.Contains(c.Text.Fields[:i], f) {
			errs = append(errs, fmt.Errorf("%w: text field %q is empty or repeated", ErrInvalidConfig, f))
		}
	}
	if c.Text.BM25 != nil {
		if err := c.Text.BM25.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrInvalidConfig, err))
		}
	}
	if a := c.Text.Analyzer; a != "" && a != analysis.Version {
		errs = append(errs, fmt.Errorf("%w: analyzer %q is not known to this version (it has %q)", ErrInvalidConfig, a, analysis.Version))
	}
	o := index.HNSWOptions{M: c.M, EfConstruction: c.EfConstruction, EfSearch: c.EfSearch}
	if err := o.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %v", ErrInvalidConfig, err))
	}
	if _, err := index.ParseQuantization(c.Quantize); err != nil {
		errs = append(errs, fmt.Errorf("%w: %v", ErrInvalidConfig, err))
	} else if c.Quantize != "" && c.Quantize != "none" && c.Index == Flat {
		errs = append(errs, fmt.Errorf("%w: quantization %q needs the hnsw index", ErrInvalidConfig, c.Quantize))
	}
	return errors.Join(errs...)
}

// newIndex returns an empty index for the config (with defaults applied).
func (c CollectionConfig) newIndex() (index.Index, error) {
	if c.Index == Flat {
		return index.NewFlat(c.Dimension, c.Metric)
	}
	quant, err := index.ParseQuantization(c.Quantize)
	if err != nil {
		return nil, err
	}
	return index.NewHNSW(c.Dimension, c.Metric, &index.HNSWOptions{M: c.M, EfConstruction: c.EfConstruction, EfSearch: c.EfSearch, Quantize: quant})
}

// validName checks a collection name: 1 to 256 bytes of UTF-8, no
// control characters. It applies to CreateCollection only: a collection
// created before a rule was added still opens.
func validName(name string) error {
	if name == "" || len(name) > 256 || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: collection name %q: want 1 to 256 bytes of UTF-8 without control characters", ErrInvalidConfig, name)
	}
	return nil
}

// Similarity converts a raw distance of metric into the engine's one
// similarity: for Cosine 1 - d (in [-1, 1]), for Dot the inner product -d,
// for L2 1 / (1 + d) (in (0, 1]). Larger is more similar for all three.
func Similarity(metric Metric, d float32) float32 {
	switch metric {
	case Dot:
		return -d
	case L2:
		return 1 / (1 + d)
	}
	return 1 - d
}
