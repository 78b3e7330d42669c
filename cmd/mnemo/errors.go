package main

import "errors"

// Errors of the text commands, matched with errors.Is. The messages that
// reach the user wrap them with the collection and what to do instead.
var (
	// errNoEmbedder reports a collection that records no embedder, so the
	// command line cannot turn a text into a vector of its space.
	errNoEmbedder = errors.New("no recorded embedder")
	// errForeignEmbedder reports a collection made with an embedder the
	// command line does not have (an HTTP model).
	errForeignEmbedder = errors.New("an embedder the command line does not have")
	// errZeroEmbedding reports a text that embeds to the zero vector: it
	// holds nothing the embedder counts (the hashing embedder counts
	// letters and digits), and a zero vector has no direction to search
	// by.
	errZeroEmbedding = errors.New("the text embeds to the zero vector (nothing in it to embed)")
)
