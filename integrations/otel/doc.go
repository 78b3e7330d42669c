// Package otelmnemo reports mnemo's operations to OpenTelemetry: a
// metrics.Recorder (set it as engine.Options.Metrics,
// postgres.Options.Metrics or an adapter's Options.Metrics) that maps each
// event to metric instruments and, when given a TracerProvider, to a span.
//
// # Instruments
//
// All carry the attributes mnemo.op (upsert, delete, query, commit, sync,
// checkpoint, text_rebuild, index_rebuild, embed), mnemo.collection
// (when the event names one), mnemo.query.mode and mnemo.query.plan (for
// queries), and error.type (on a failed operation: the error's sentinel,
// such as "mnemo: invalid record", or "error").
//
//	mnemo.operations          counter    {operation}  operations finished
//	mnemo.operation.duration  histogram  s            their duration
//	mnemo.operation.records   counter    {record}     records written, deleted,
//	                                                  returned, indexed or embedded
//	mnemo.operation.bytes     counter    By           bytes committed, checkpointed
//	                                                  or embedded
//
// The records and bytes counters are added to only when the event sets
// them (see package metrics for which operation sets what).
//
// # Spans
//
// With Options.TracerProvider set, each event also becomes a span named
// "mnemo." plus the operation ("mnemo.query"), with the same attributes,
// the records and bytes as mnemo.records and mnemo.bytes, the event's
// start and end times, and an error status on failure. A Recorder
// receives no context, so these spans are roots, not children of the
// caller's span; a program that wants them nested starts its own span
// around the call.
//
// This package is a module of its own, so that mnemo's own module
// requires nothing of OpenTelemetry.
package otelmnemo
