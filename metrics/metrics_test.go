package metrics_test

import (
	"testing"

	"github.com/mnemodb/mnemo/metrics"
)

func TestMulti(t *testing.T) {
	if metrics.Multi() != nil || metrics.Multi(nil, nil) != nil {
		t.Fatal("Multi of no recorder is not nil")
	}
	var a, b []string
	ra := metrics.Func(func(e metrics.Event) { a = append(a, e.Op) })
	rb := metrics.Func(func(e metrics.Event) { b = append(b, e.Op) })
	if r := metrics.Multi(nil, ra); r == nil {
		t.Fatal("Multi of one recorder is nil")
	} else {
		r.Record(metrics.Event{Op: "one"})
	}
	metrics.Multi(ra, nil, rb).Record(metrics.Event{Op: "both"})
	if len(a) != 2 || a[0] != "one" || a[1] != "both" || len(b) != 1 || b[0] != "both" {
		t.Fatalf("a = %v, b = %v", a, b)
	}
}
