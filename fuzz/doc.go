// Package fuzz gathers the fuzz targets that exercise whole behaviours of
// mnemo, each with a committed seed corpus under testdata/fuzz:
//
//   - FuzzEngineOps: streams of upserts, deletes, queries, checkpoints and
//     reopens against a map model;
//   - FuzzFilter: the metadata filter parser (on JSON text, and on Go
//     values built from the same input, cycles included) and evaluator
//     against a straightforward reference evaluator;
//   - FuzzMetadata: record metadata of every shape (deep, cyclic, not
//     UTF-8, odd numbers) is refused with a clear error and no change, or
//     reads back unchanged across a reopen;
//   - FuzzDocumentPaths: document-store paths never escape the root.
//
// Package-local targets live beside their code: simd FuzzKernels, index
// FuzzOps and FuzzSnapshot (snapshot decoding), wal FuzzDecode (log record
// decoding), memory/embed FuzzHashing. CI runs every target for 10 s; run
// one for hours with
//
//	go test -run '^$' -fuzz '^FuzzEngineOps$' -fuzztime 4h ./fuzz/
package fuzz
