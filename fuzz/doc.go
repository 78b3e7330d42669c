// Package fuzz gathers the fuzz targets that exercise whole behaviours of
// mnemo, each with a committed seed corpus under testdata/fuzz:
//
//   - FuzzEngineOps: streams of upserts, deletes, queries, checkpoints and
//     reopens against a map model;
//   - FuzzFilter: the metadata filter parser and evaluator against a
//     straightforward reference evaluator;
//   - FuzzDocumentPaths: document-store paths never escape the root.
//
// Package-local targets live beside their code: simd FuzzKernels, index
// FuzzOps and FuzzSnapshot (snapshot decoding), wal FuzzDecode (log record
// decoding), memory/embed FuzzHashing. CI runs every target for 10 s; run
// one for hours with
//
//	go test -run '^$' -fuzz '^FuzzEngineOps$' -fuzztime 4h ./fuzz/
package fuzz
