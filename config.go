package mnemo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemodb/mnemo/analysis"
)

// Metric is the distance a collection ranks by. Its values are persisted
// (as numbers, in a collection's config) and never change.
type Metric uint8

// Metrics.
const (
	// Cosine ranks by cosine distance 1 - cos(a, b), in [0, 2];
	// similarity 1 - distance. A zero vector has no direction and is
	// refused (ErrZeroVector).
	Cosine Metric = 1
	// Dot ranks by negative inner product, -dot(a, b); similarity is the
	// inner product.
	Dot Metric = 2
	// L2 ranks by squared Euclidean distance; similarity 1 / (1 + d).
	L2 Metric = 3
)

// String returns "cosine", "dot" or "l2".
func (m Metric) String() string {
	switch m {
	case Cosine:
		return "cosine"
	case Dot:
		return "dot"
	case L2:
		return "l2"
	}
	return fmt.Sprintf("Metric(%d)", uint8(m))
}

// ParseMetric parses "cosine", "dot" (or "ip", "inner_product") and "l2"
// (or "euclidean"), in any case.
func ParseMetric(s string) (Metric, error) {
	switch strings.ToLower(s) {
	case "cosine":
		return Cosine, nil
	case "dot", "ip", "inner_product":
		return Dot, nil
	case "l2", "euclidean":
		return L2, nil
	}
	return 0, fmt.Errorf("%w: unknown metric %q (want cosine, dot or l2)", ErrInvalidConfig, s)
}

// Defaults of a collection's HNSW parameters (those of hnswlib's usual
// configuration, as the engine's index uses them).
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
	// MaxM bounds CollectionConfig.M.
	MaxM = 256
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
// reopened database needs none of it again. It is plain data, safe to
// read from several goroutines, but its Text holds a slice (Fields) and a
// pointer (BM25): a config that Collection.Config returns shares them with
// the collection, so do not change them.
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
	// candidates and for exact plans). The engine's index keeps them; a
	// server backend may ignore it but persists it as part of the config.
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
	// another kind's collection (ErrCollectionKind), so two
	// memories that pick the same name cannot share one collection.
	Kind string `json:"kind,omitempty"`
	// Text configures the full-text index (see TextConfig). The zero value
	// indexes each record's content with BM25's default parameters.
	Text TextConfig `json:"text"`
}

// TextConfig configures a collection's full-text index, which Query uses
// for text and hybrid queries. Every record's content (and the listed
// metadata fields) is analyzed by package analysis and indexed in the same
// atomic write as the record. Like CollectionConfig, it is plain data,
// safe to read from several goroutines while no one changes it.
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

// WithDefaults returns c with the documented defaults of its zero fields
// applied, as CreateCollection stores it and Collection.Config returns it
// on every backend.
func (c CollectionConfig) WithDefaults() CollectionConfig {
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
			c.M = DefaultM
		}
		if c.EfConstruction == 0 {
			c.EfConstruction = DefaultEfConstruction
		}
		if c.EfSearch == 0 {
			c.EfSearch = DefaultEfSearch
		}
		if q, ok := quantization(c.Quantize); ok {
			c.Quantize = q // "none" is stored as a config that never named one
		}
	}
	return c
}

// Equal reports whether c and o define the same collection (defaults
// applied to both): what CreateCollection compares with the config of an
// existing collection of the same name.
func (c CollectionConfig) Equal(o CollectionConfig) bool {
	a, _ := json.Marshal(c.WithDefaults())
	b, _ := json.Marshal(o.WithDefaults())
	return bytes.Equal(a, b)
}

// quantization returns the canonical form of a quantization name ("" for
// none, "sq8"), or false for an unknown one.
func quantization(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "", "none":
		return "", true
	case "sq8":
		return "sq8", true
	}
	return "", false
}

// Validate reports every problem with the config at once, each wrapping
// ErrInvalidConfig.
func (c CollectionConfig) Validate() error {
	var errs []error
	if c.Dimension <= 0 || c.Dimension > MaxDimension {
		errs = append(errs, fmt.Errorf("%w: dimension %d, want 1..%d", ErrInvalidConfig, c.Dimension, MaxDimension))
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
	if !utf8.ValidString(c.Embedder) {
		// JSON would store U+FFFD instead: two embedders would be one.
		errs = append(errs, fmt.Errorf("%w: embedder %q is not valid UTF-8", ErrInvalidConfig, c.Embedder))
	}
	errs = append(errs, c.Text.problems()...)
	if c.M != 0 && (c.M < 2 || c.M > MaxM) {
		errs = append(errs, fmt.Errorf("%w: M is %d, want 2..%d", ErrInvalidConfig, c.M, MaxM))
	}
	if c.EfConstruction < 0 || c.EfSearch < 0 {
		errs = append(errs, fmt.Errorf("%w: ef_construction %d, ef_search %d: want >= 1, or 0 for the default", ErrInvalidConfig, c.EfConstruction, c.EfSearch))
	}
	if q, ok := quantization(c.Quantize); !ok {
		errs = append(errs, fmt.Errorf("%w: unknown quantization %q (want none or sq8)", ErrInvalidConfig, c.Quantize))
	} else if q != "" && c.Index == Flat {
		errs = append(errs, fmt.Errorf("%w: quantization %q needs the hnsw index", ErrInvalidConfig, c.Quantize))
	}
	return errors.Join(errs...)
}

// problems lists what is wrong with a text config.
func (t TextConfig) problems() []error {
	var errs []error
	if len(t.Fields) > 64 {
		errs = append(errs, fmt.Errorf("%w: %d text fields, at most 64", ErrInvalidConfig, len(t.Fields)))
	}
	for i, f := range t.Fields {
		if f == "" || slices.Contains(t.Fields[:i], f) {
			errs = append(errs, fmt.Errorf("%w: text field %q is empty or repeated", ErrInvalidConfig, f))
		}
		if !utf8.ValidString(f) { // no metadata key is: it names nothing
			errs = append(errs, fmt.Errorf("%w: text field %q is not valid UTF-8", ErrInvalidConfig, f))
		}
	}
	if t.BM25 != nil {
		if err := t.BM25.validate(); err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrInvalidConfig, err))
		}
	}
	if a := t.Analyzer; a != "" && a != analysis.Version {
		errs = append(errs, fmt.Errorf("%w: analyzer %q is not known to this version (it has %q)", ErrInvalidConfig, a, analysis.Version))
	}
	return errs
}

// MaxDimension bounds CollectionConfig.Dimension.
const MaxDimension = 1 << 16

// CheckCollectionName reports whether name is a valid name for a new
// collection: 1 to 256 bytes of UTF-8 without control characters
// (ErrInvalidConfig otherwise). It applies to CreateCollection only: a
// collection created before a rule was added still opens.
func CheckCollectionName(name string) error {
	if name == "" || len(name) > 256 || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: collection name %q: want 1 to 256 bytes of UTF-8 without control characters", ErrInvalidConfig, name)
	}
	return nil
}
