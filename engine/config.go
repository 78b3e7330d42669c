package engine

import (
	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/index"
)

// newIndex returns an empty index for a collection's config (defaults
// applied).
func newIndex(c mnemo.CollectionConfig) (index.Index, error) {
	if c.Index == mnemo.Flat {
		return index.NewFlat(c.Dimension, indexMetric(c.Metric))
	}
	quant, err := index.ParseQuantization(c.Quantize)
	if err != nil {
		return nil, err
	}
	return index.NewHNSW(c.Dimension, indexMetric(c.Metric), &index.HNSWOptions{M: c.M, EfConstruction: c.EfConstruction, EfSearch: c.EfSearch, Quantize: quant})
}

// indexMetric is the index's name for a collection's metric.
func indexMetric(m mnemo.Metric) index.Metric {
	switch m {
	case mnemo.Dot:
		return index.Dot
	case mnemo.L2:
		return index.L2
	}
	return index.Cosine
}

// quantization names the index quantization of a config with defaults
// applied, as index.Quantization's String does.
func quantization(c mnemo.CollectionConfig) string {
	if c.Quantize == "" {
		return index.NoQuantization.String()
	}
	return c.Quantize
}
