package otelmnemo

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mnemodb/mnemo"
	"github.com/mnemodb/mnemo/metrics"
)

// ScopeName is the instrumentation scope of the meter and tracer.
const ScopeName = "github.com/mnemodb/mnemo"

// Options configure a Recorder. A nil *Options is valid.
type Options struct {
	// MeterProvider provides the meter of the instruments. Default: the
	// global one (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
	// TracerProvider, when set, turns each event into a span too.
	// Default nil: no spans.
	TracerProvider trace.TracerProvider
}

// Recorder is a metrics.Recorder reporting to OpenTelemetry. It is safe
// for concurrent use by multiple goroutines. Record allocates nothing for
// metrics once an attribute set (an operation on a collection, with a
// query's mode and plan, and an error type) has been seen; attribute sets
// are kept for the Recorder's life, so their number is that of the
// distinct combinations, bounded by the collections in use.
type Recorder struct {
	operations metric.Int64Counter
	duration   metric.Float64Histogram
	records    metric.Int64Counter
	bytes      metric.Int64Counter
	tracer     trace.Tracer // nil without spans

	mu   sync.RWMutex
	sets map[setKey]*attrs // protected by mu
}

// setKey identifies an attribute set.
type setKey struct{ op, collection, mode, plan, errType string }

// attrs is an attribute set, ready for each kind of use.
type attrs struct {
	opt  metric.MeasurementOption
	span []attribute.KeyValue
}

// New returns a Recorder whose instruments come from opts.MeterProvider.
func New(opts *Options) (*Recorder, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	m := o.MeterProvider.Meter(ScopeName)
	r := &Recorder{sets: map[setKey]*attrs{}}
	var errs [4]error
	r.operations, errs[0] = m.Int64Counter("mnemo.operations", metric.WithUnit("{operation}"),
		metric.WithDescription("mnemo operations finished"))
	r.duration, errs[1] = m.Float64Histogram("mnemo.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("duration of mnemo operations"),
		metric.WithExplicitBucketBoundaries(1e-6, 4e-6, 1.6e-5, 6.4e-5, 2.56e-4, 1.024e-3, 4.096e-3, 1.6384e-2, 6.5536e-2, 0.262144, 1.048576, 4.194304, 16.777216))
	r.records, errs[2] = m.Int64Counter("mnemo.operation.records", metric.WithUnit("{record}"),
		metric.WithDescription("records written, deleted, returned, indexed or embedded by mnemo operations"))
	r.bytes, errs[3] = m.Int64Counter("mnemo.operation.bytes", metric.WithUnit("By"),
		metric.WithDescription("bytes committed, checkpointed or embedded by mnemo operations"))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	if o.TracerProvider != nil {
		r.tracer = o.TracerProvider.Tracer(ScopeName)
	}
	return r, nil
}

// Record reports e. It is safe for concurrent use.
func (r *Recorder) Record(e metrics.Event) {
	a := r.attrs(setKey{e.Op, e.Collection, e.Mode, e.Plan, ErrorType(e.Err)})
	ctx := context.Background()
	r.operations.Add(ctx, 1, a.opt)
	r.duration.Record(ctx, e.Duration.Seconds(), a.opt)
	if e.Records != 0 {
		r.records.Add(ctx, int64(e.Records), a.opt)
	}
	if e.Bytes != 0 {
		r.bytes.Add(ctx, e.Bytes, a.opt)
	}
	if r.tracer != nil {
		r.span(ctx, e, a)
	}
}

// span reports e as a span that ended now and lasted e.Duration.
func (r *Recorder) span(ctx context.Context, e metrics.Event, a *attrs) {
	end := time.Now()
	_, s := r.tracer.Start(ctx, "mnemo."+e.Op, trace.WithTimestamp(end.Add(-e.Duration)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(a.span...))
	if e.Records != 0 {
		s.SetAttributes(attribute.Int("mnemo.records", e.Records))
	}
	if e.Bytes != 0 {
		s.SetAttributes(attribute.Int64("mnemo.bytes", e.Bytes))
	}
	if e.Err != nil {
		s.RecordError(e.Err)
		s.SetStatus(codes.Error, e.Err.Error())
	}
	s.End(trace.WithTimestamp(end))
}

// attrs returns the attribute set of k, making it the first time.
func (r *Recorder) attrs(k setKey) *attrs {
	r.mu.RLock()
	a := r.sets[k]
	r.mu.RUnlock()
	if a != nil {
		return a
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a = r.sets[k]; a != nil {
		return a
	}
	kv := []attribute.KeyValue{attribute.String("mnemo.op", k.op)}
	for _, f := range []struct{ key, value string }{
		{"mnemo.collection", k.collection}, {"mnemo.query.mode", k.mode}, {"mnemo.query.plan", k.plan}, {"error.type", k.errType},
	} {
		if f.value != "" {
			kv = append(kv, attribute.String(f.key, f.value))
		}
	}
	a = &attrs{opt: metric.WithAttributeSet(attribute.NewSet(kv...)), span: kv}
	r.sets[k] = a
	return a
}

// sentinels are the errors ErrorType names, first match wins.
var sentinels = []error{
	context.Canceled, context.DeadlineExceeded,
	mnemo.ErrClosed, mnemo.ErrCollectionNotFound, mnemo.ErrCollectionExists, mnemo.ErrCollectionKind,
	mnemo.ErrInvalidConfig, mnemo.ErrInvalidID, mnemo.ErrBatchTooLarge, mnemo.ErrDimension,
	mnemo.ErrNonFinite, mnemo.ErrZeroVector, mnemo.ErrNormOverflow, mnemo.ErrInvalidRecord,
	mnemo.ErrBadFilter, mnemo.ErrBadQuery, mnemo.ErrLockHeld, mnemo.ErrLockLost, mnemo.ErrSequenceUnset,
}

// ErrorType returns the error.type attribute of err: "" for nil, the
// message of the first of mnemo's sentinel errors (or context.Canceled,
// context.DeadlineExceeded) that err matches, else "_OTHER", so that the
// attribute's values stay few.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "_OTHER"
}
